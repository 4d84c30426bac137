"""The lines of a text file, each at most so long: a 200 MB line costs a bounded read, not gigabytes.

Iterating a ``TextIOWrapper`` builds each line whole before the reader can cut it; one 200 MB line
of a log (a tensor printed in full, a base64 blob) then took over a gigabyte in ``airctl import``
(the text, its stripped copy, the decoder's chunks). :func:`bounded_lines` reads each line with a
byte limit (``readline(limit)``), keeps its first ``limit`` bytes, and reads the rest of an overlong
line in fixed chunks that are dropped: memory stays at ``limit`` plus one chunk, whatever the file.
Lines end at ``\\n`` (a ``\\r\\n`` ending stays on the line for the reader to strip); bytes are
decoded as UTF-8 with replacement, a character cut at the limit included.

>>> import io
>>> list(bounded_lines(io.BytesIO(b"ab\\n" + b"x" * 10 + b"\\nend"), 4))
['ab\\n', 'xxxx\\n', 'end']
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

SKIP_CHUNK = 1 << 20


def bounded_lines(raw: BinaryIO, limit: int, encoding: str = "utf-8") -> Iterator[str]:
    """Each line of ``raw`` (with its ``\\n``), cut to ``limit`` bytes (the cut line still ends in
    ``\\n`` when the original did)."""
    while True:
        line = raw.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            ended = False
            while not ended:
                more = raw.readline(SKIP_CHUNK)
                ended = not more or more.endswith(b"\n")
            line = line[:limit] + (b"\n" if more else b"")
        yield line.decode(encoding, "replace")
