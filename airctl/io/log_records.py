"""Split a TorchAir log into records: one per ``[LEVEL] TORCHAIR(pid,exe):time [file:line]tid message`` line
(npugraph_ex logs the same way as ``NPUGRAPH_EX(pid,exe)``).

TorchAir's Python logger (``torchair/core/utils.py`` ``_get_logger``; the same format for the
``torchair/debug.log`` of TORCH_COMPILE_DEBUG) writes, with no space between ``]`` and the thread
id::

    [DEBUG] TORCHAIR(6702,python):2026-11-23 13:26:39.559.574 [npu_fx_compiler.py:387]6702 after fx graph \
optimization, graph is graph():                                                      (one line in the log)
        %arg0_1 : [num_users=2] = placeholder[target=arg0_1]
        ...

The C++ side (``TNG_LOG_LEVEL``, NPU only) uses a ``2025-02-06-15:44:53.084.205`` date; both match.
So does the ``log.txt`` of an ``airctl compile`` ledger, which holds the same records in airctl's
own format (``2026-11-23 15:54:26,038 DEBUG torchair [npu_fx_compiler.py:387] message``,
:mod:`airctl.pipeline.run.logs`): no process or thread id there, so both read as 0 (one process).
Lines that do not start a record continue the previous one (graph listings and pass tables are
indented four spaces; generated code and the script's own ``print`` output are not, so each site
takes only the continuation it expects, :mod:`airctl.io.torchair_log`). Lines before the first
record (torch's or the profiler's own output) are counted and skipped. The file is read as a
stream, each line cut to ``MAX_LINE`` as it is read (:func:`airctl.io.bounded_lines.bounded_lines`:
one 200 MB line costs a few megabytes), so a log of any size costs memory only for the longest
record.

>>> [(r.level, r.file, r.lineno, r.message) for r in iter_records(["[INFO] TORCHAIR(1,python):"
...     "2026-01-01 00:00:00.000.000 [utils.py:9]1 hello", "    more"])]
[('INFO', 'utils.py', 9, 'hello')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from airctl.errors import GraphReadError
from airctl.io.bounded_lines import bounded_lines
from airctl.io.compressed import open_bytes

RECORD = re.compile(
    r"^\[(?P<level>DEBUG|INFO|WARNING|ERROR|EVENT|CRITICAL)\] (?P<logger>TORCHAIR|NPUGRAPH_EX)\((?P<pid>\d+),"
    r"(?P<exe>[^)]*)\):"
    r"(?P<time>\d{4}-\d{2}-\d{2}[ -]\d{2}:\d{2}:\d{2}\.\d{3}\.\d{3}) \[(?P<file>[^\]:]+):(?P<lineno>\d+)\]"
    r"(?P<tid>\d+) (?P<message>.*)$")
LEDGER_RECORD = re.compile(  # airctl.pipeline.run.logs.FORMAT: the log.txt of a compile ledger
    r"^(?P<time>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) (?P<level>DEBUG|INFO|WARNING|ERROR|EVENT|CRITICAL) "
    r"(?:torchair|airctl)[\w.]* \[(?P<file>[^\]:]+):(?P<lineno>\d+)\] (?P<message>.*)$")
MAX_LINE = 4 << 20  # characters kept of one line (longer lines are cut, the record keeps its place)
MAX_CONTINUATION = 2_000_000  # continuation lines kept per record


@dataclass
class LogRecord:
    level: str
    pid: int
    exe: str
    time: str
    file: str  # TorchAir's source file that logged it (npu_fx_compiler.py)
    lineno: int
    tid: int
    message: str
    line: int  # 1-based line of the record in the log file
    more: list[str] = field(default_factory=list)  # continuation lines, as written
    logger: str = "TORCHAIR"  # NPUGRAPH_EX: npugraph_ex's own logger (its debug.log, same format)

    @property
    def site(self) -> str:
        return f"{self.file}:{self.lineno}"

    def indented(self, prefix: str = "    ") -> list[str]:
        """The continuation lines up to the first non-blank one not starting with ``prefix`` (blank lines
        inside, as between a pass table's two tables, are kept; blank lines at the end are not)."""
        out = []
        for text in self.more:
            if text.strip() and not text.startswith(prefix):
                break
            out.append(text)
        while out and not out[-1].strip():
            out.pop()
        return out


def is_torchair_log(head: str) -> bool:
    """Does ``head`` (a file's first kilobytes) hold a TorchAir log record?"""
    return any(_match(line) for line in head.split("\n")[:200])


def _match(text: str) -> re.Match[str] | None:
    if text[:1].isdigit():  # the ledger's format; TorchAir's starts with "[", continuations mostly with spaces
        return LEDGER_RECORD.match(text)
    return RECORD.match(text)


def iter_records(lines: Iterable[str]) -> Iterator[LogRecord]:
    current: LogRecord | None = None
    for number, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")[:MAX_LINE]
        m = _match(text)
        if m is not None:
            if current is not None:
                yield current
            fields = m.groupdict()
            current = LogRecord(m["level"], int(fields.get("pid") or 0), fields.get("exe") or "", m["time"], m["file"],
                                int(m["lineno"]), int(fields.get("tid") or 0), m["message"], number,
                                logger=fields.get("logger") or "TORCHAIR")
        elif current is not None and len(current.more) < MAX_CONTINUATION:
            current.more.append(text)
    if current is not None:
        yield current


def read_records(path: Path) -> Iterator[LogRecord]:
    """The records of a log file; unreadable files raise GraphReadError naming the file."""
    try:
        with open_bytes(path) as handle:
            yield from iter_records(bounded_lines(handle, MAX_LINE))  # a ledger's log.txt.gz too
    except OSError as e:
        raise GraphReadError(f"cannot read: {e.strerror or e}", file=str(path)) from e
