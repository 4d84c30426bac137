"""CSV tables as torch_npu writes them: CRLF lines, QUOTE_MINIMAL, a UTF-8 BOM at times.

Bytes that are not UTF-8 (an op name in a local code page) are replaced and reported with the
line they are on; the times are unaffected. A UTF-16 file (re-saved by a spreadsheet) is read as
such. A NUL byte or an unterminated quote is an error naming the line. Columns are looked up by
the names each profiler version used (:func:`columns`), so unknown ones are ignored and missing
ones reported.
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from airctl.limits import CSV_HEADER_BYTES, CSV_HEADER_COLUMNS, PROFILE_TABLE_BYTES
from airctl.profile.ascend.model import Columns, Issues, ProfileReadError
from airctl.safe_files import read_regular


@dataclass
class Table:
    path: Path
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (line number of the row's first line, cells)
    index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for i, name in enumerate(self.header):
            self.index.setdefault(name, i)

    def cell(self, cells: list[str], column: str | None) -> str:
        """The stripped cell of ``column`` (TAB and spaces around it go), "" when absent or short."""
        i = self.index.get(column) if column is not None else None
        return cells[i].strip() if i is not None and i < len(cells) else ""


def _decode(data: bytes, path: Path, issues: Issues) -> str:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        issues.warn(f"{path}:{line}", "bytes that are not UTF-8 were replaced by U+FFFD (names may show �; "
                    "times are unaffected)")
        return data.decode("utf-8-sig", errors="replace")


def read_table(path: Path, issues: Issues) -> Table:
    """The header and the non-blank rows of a CSV file, with their line numbers."""
    try:  # a FIFO or a device: refused, never read; nothing past the limit
        data = read_regular(path, PROFILE_TABLE_BYTES, error=ProfileReadError, what="profiler table",
                            hint="a longer profile than airctl reads: profile fewer steps (schedule's active)")
    except OSError as e:
        raise ProfileReadError(f"cannot read {path.name}: {e.strerror or e}", file=str(path)) from e
    reader = csv.reader(io.StringIO(_decode(data, path, issues), newline=""))
    rows: list[tuple[int, list[str]]] = []
    header: list[str] = []
    try:
        start = 1
        for cells in reader:
            if not header:
                _check_header(cells, path)
                header = [c.strip().lstrip("\ufeff") for c in cells]
            elif any(c.strip() for c in cells):
                if len(cells) > len(header) and not any(c.strip() for c in cells[len(header):]):
                    cells = cells[:len(header)]  # a trailing separator
                if len(cells) == len(header):
                    rows.append((start, cells))
                else:  # its fields would land under other columns' names
                    issues.warn(f"{path}:{start}", f"{len(cells)} fields where the header has {len(header)}: "
                                "the row is passed over")
            start = reader.line_num + 1
    except csv.Error as e:
        raise ProfileReadError(f"{path.name} is not a readable CSV file: {e}", file=str(path),
                               line=reader.line_num or 1,
                               hint="it should be the profiler's own output; re-export it from the raw data "
                                    "with torch_npu.profiler.profiler.analyse(<folder>)") from e
    return Table(path, header, rows)


def _check_header(cells: list[str], path: Path) -> None:
    """ProfileReadError when the header is more than a profiler writes (a few dozen names): over
    :data:`~airctl.limits.CSV_HEADER_COLUMNS` columns or :data:`~airctl.limits.CSV_HEADER_BYTES`
    characters. Said in one short line: the names themselves are not repeated."""
    size = sum(len(c) + 1 for c in cells)
    if len(cells) > CSV_HEADER_COLUMNS or size > CSV_HEADER_BYTES:
        raise ProfileReadError(f"{path.name}: its header has {len(cells):,} columns ({size:,} characters), more than "
                               f"a profiler's table has (at most {CSV_HEADER_COLUMNS:,} columns and "
                               f"{CSV_HEADER_BYTES:,} characters)", file=str(path), line=1,
                               hint="it should be the profiler's own output; re-export it from the raw data "
                                    "with torch_npu.profiler.profiler.analyse(<folder>)")


def columns(table: Table, wanted: dict[str, tuple[str, ...]], useful: tuple[str, ...] = ()) -> tuple[
        dict[str, str | None], Columns]:
    """For each key of ``wanted`` the first of its names the header has (case-insensitive), or None.

    ``useful`` keys that are absent are listed as missing; header names no key asked for are ignored.
    """
    lowered = {h.lower(): h for h in reversed(table.header)}
    found: dict[str, str | None] = {}
    for key, names in wanted.items():
        found[key] = next((lowered[n.lower()] for n in names if n.lower() in lowered), None)
    used = {v for v in found.values() if v}
    report = Columns(table.path.name, read=[h for h in table.header if h in used],
                     missing=[wanted[k][0] for k in useful if found.get(k) is None],
                     ignored=[h for h in table.header if h not in used])
    return found, report
