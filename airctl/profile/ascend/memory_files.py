"""The torch_npu profiler's memory files (``profile_memory=True``), read row by row in bounded memory.

Three CSV files in ``ASCEND_PROFILER_OUTPUT`` (docs/memory.md "What the measured files mean"):

- ``memory_record.csv`` — ``Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB)[,Total
  Active(MB),Stream Ptr],Device Type``: the allocators' totals after each allocation or free.
  ``PTA`` is torch_npu's caching allocator, ``GE`` GE's, ``PTA+GE`` their sum, ``APP`` the whole
  process's device memory (reserved only). MB are MiB;
- ``operator_memory.csv`` — ``Name,Size(KB),Allocation Time(us),Release Time(us),…``: one row per
  block an operator allocated (its size as the allocator rounded it; no release time: still held
  when the profile ended);
- ``npu_module_mem.csv`` — ``[Device_id,]Component,Timestamp(us),Total Reserved(MB),Device``: what
  each CANN module (HCCL, RUNTIME, GE, APP…) held.

Each file is streamed (a few numbers per component and the :data:`TOP` largest blocks are kept,
whatever its size); lines longer than :data:`LINE_CHARS` are refused. Bad input — a missing column,
a row with too few or too many cells, a number that is not one, a last line cut short — raises
:class:`ProfileReadError` naming the file and line (exit 2). Timestamps carry torch_npu's trailing TAB.
"""

from __future__ import annotations

import codecs
import csv
import heapq
import io
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from airctl.profile.ascend.model import Issues, ProfileReadError
from airctl.profile.ascend.table import Table, _check_header, columns
from airctl.profile.ascend.times import DAY_NS, MISSING, TimeValueError, ns_to_us, us_to_ns
from airctl.safe_files import open_regular

RECORD, OPERATORS, MODULES = "memory_record.csv", "operator_memory.csv", "npu_module_mem.csv"
MiB, KiB = 1 << 20, 1 << 10
TOP = 20  # the largest operator blocks kept
LINE_CHARS = 1 << 20  # no line of these files comes near (a row is ~200 characters)
TOTALS = ("PTA+GE", "PTA", "GE")  # the component whose allocated peak is the measured peak, first found
HINT = ("expected torch_npu's own output (profile_memory=True); re-export it with "
        "torch_npu.profiler.profiler.analyse(<folder>)")

RECORD_COLS = {"component": ("Component",), "time": ("Timestamp(us)",), "allocated": ("Total Allocated(MB)",),
               "reserved": ("Total Reserved(MB)",), "active": ("Total Active(MB)",), "stream": ("Stream Ptr",)}
OPERATOR_COLS = {"name": ("Name",), "size": ("Size(KB)",), "alloc": ("Allocation Time(us)",),
                 "release": ("Release Time(us)",), "stream": ("Stream Ptr",)}
MODULE_COLS = {"component": ("Component",), "time": ("Timestamp(us)",), "reserved": ("Total Reserved(MB)",)}


@dataclass
class Peak:
    bytes: int
    at_us: float  # epoch µs
    line: int


@dataclass
class ComponentMemory:
    rows: int = 0
    allocated: Peak | None = None
    reserved: Peak | None = None
    active: Peak | None = None


@dataclass
class OperatorBlock:
    name: str
    bytes: int
    alloc_us: float
    release_us: float | None  # None: held when the profile ended
    stream: str | None
    line: int


@dataclass
class MeasuredMemory:
    peak_allocated_bytes: int | None  # of the first of TOTALS the record has
    peak_reserved_bytes: int | None
    peak_at_us: float | None
    peak_from: str | None  # the component
    components: dict[str, ComponentMemory] = field(default_factory=dict)
    top_operators: list[OperatorBlock] = field(default_factory=list)
    operator_blocks: int = 0
    unreleased_blocks: int = 0
    modules: dict[str, int] = field(default_factory=dict)  # CANN module -> its peak reserved bytes (non-zero)
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def find_memory_files(folder: Path) -> dict[str, Path]:
    """The memory files of a profiler folder (``…_ascend_pt``, its ``ASCEND_PROFILER_OUTPUT``, or a
    folder holding the CSVs), by name; empty when it has none."""
    for where in (folder / "ASCEND_PROFILER_OUTPUT", folder):
        found = {n: where / n for n in (RECORD, OPERATORS, MODULES) if (where / n).is_file()}
        if found:
            return found
    return {}


def read_memory(folder: Path, issues: Issues | None = None) -> MeasuredMemory | None:
    """What the profiler measured of device memory in ``folder``; None when it wrote no memory files."""
    files = find_memory_files(folder)
    if not files:
        return None
    issues = issues if issues is not None else Issues()
    comps = read_memory_record(files[RECORD], issues) if RECORD in files else {}
    top, count, held = read_operator_memory(files[OPERATORS], issues) if OPERATORS in files else ([], 0, 0)
    modules, module_times = read_module_memory(files[MODULES], issues) if MODULES in files else ({}, [])
    total = next((comps[c] for c in TOTALS if c in comps and comps[c].allocated), None)
    record_times = [p.at_us for c in comps.values() for p in (c.allocated, c.reserved) if p]
    if record_times and module_times and abs(min(record_times) - min(module_times)) * 1000 > DAY_NS:
        issues.warn(str(files[MODULES]), f"its times are more than a day from {RECORD}'s: another capture's file?")
    return MeasuredMemory(
        total.allocated.bytes if total and total.allocated else None,
        total.reserved.bytes if total and total.reserved else None,
        total.allocated.at_us if total and total.allocated else None,
        next((c for c in TOTALS if comps.get(c) is total), None) if total else None,
        comps, top, count, held, modules, [str(p) for p in files.values()], issues.finish())


def read_memory_record(path: Path, issues: Issues) -> dict[str, ComponentMemory]:
    """Each component's highest allocated, reserved and active totals, with when and on which line."""
    out: dict[str, ComponentMemory] = {}
    sizes = (("allocated", "Total Allocated(MB)"), ("reserved", "Total Reserved(MB)"), ("active", "Total Active(MB)"))
    with _Rows(path, issues, RECORD_COLS, ("component", "time", "reserved")) as rows:
        col = rows.col
        for line, cells in rows:
            comp = out.setdefault(_cell(cells, col["component"]), ComponentMemory())
            comp.rows += 1
            at = _time(_cell(cells, col["time"]), path, line, "Timestamp(us)")
            for key, column in sizes:
                value = _size(_cell(cells, col[key]), MiB, path, line, column)
                best = getattr(comp, key)
                if value is not None and (best is None or value > best.bytes):
                    setattr(comp, key, Peak(value, at, line))
    return out


def read_operator_memory(path: Path, issues: Issues, top: int = TOP) -> tuple[list[OperatorBlock], int, int]:
    """The ``top`` largest blocks (largest first), how many blocks there were, how many were never released."""
    heap: list[tuple[int, int, OperatorBlock]] = []
    count = held = 0
    with _Rows(path, issues, OPERATOR_COLS, ("name", "size", "alloc")) as rows:
        col = rows.col
        for line, cells in rows:
            size = _size(_cell(cells, col["size"]), KiB, path, line, "Size(KB)")
            if size is None:
                raise ProfileReadError("Size(KB) is empty", file=str(path), line=line, hint=HINT)
            released = _cell(cells, col["release"])
            block = OperatorBlock(_cell(cells, col["name"]), size,
                                  _time(_cell(cells, col["alloc"]), path, line, "Allocation Time(us)"),
                                  _time(released, path, line, "Release Time(us)") if released else None,
                                  _cell(cells, col["stream"]) or None, line)
            count += 1
            held += block.release_us is None
            item = (size, -line, block)
            if len(heap) < top:
                heapq.heappush(heap, item)
            elif item[:2] > heap[0][:2]:
                heapq.heapreplace(heap, item)
    return [b for _, _, b in sorted(heap, key=lambda t: t[:2], reverse=True)], count, held


def read_module_memory(path: Path, issues: Issues) -> tuple[dict[str, int], list[float]]:
    """Each CANN module's highest reserved bytes (modules that held none are left out), and the first time."""
    peaks: dict[str, int] = {}
    first: float | None = None
    with _Rows(path, issues, MODULE_COLS, ("component", "time", "reserved")) as rows:
        col = rows.col
        for line, cells in rows:
            at = _time(_cell(cells, col["time"]), path, line, "Timestamp(us)")
            first = at if first is None else min(first, at)
            value = _size(_cell(cells, col["reserved"]), MiB, path, line, "Total Reserved(MB)") or 0
            name = _cell(cells, col["component"])
            peaks[name] = max(peaks.get(name, 0), value)
    return {k: v for k, v in peaks.items() if v > 0}, ([first] if first is not None else [])


def _cell(cells: list[str], i: int | None) -> str:
    return cells[i].strip() if i is not None else ""


def _size(text: str, unit: int, path: Path, line: int, column: str) -> int | None:
    """A size in MB/KB (binary units) as whole bytes; None when the cell is empty. torch_npu prints
    the allocator's exact byte counts divided by 2^20 or 2^10, which a float holds exactly."""
    if text in MISSING:
        return None
    try:
        value = float(text) if "_" not in text else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ProfileReadError(f"{column} {text[:40]!r} is not a size", file=str(path), line=line, hint=HINT)
    return round(value * unit)


def _time(text: str, path: Path, line: int, column: str) -> float:
    try:
        return ns_to_us(us_to_ns(text))
    except TimeValueError:
        raise ProfileReadError(f"{column} {text[:40]!r} is not a time", file=str(path), line=line,
                               hint=HINT) from None


class _Rows:
    """The data rows of one CSV file, one at a time: ``(line, cell)`` where ``cell(key)`` is the
    stripped cell of the column ``wanted[key]`` names ("" when the header has no such column)."""

    def __init__(self, path: Path, issues: Issues, wanted: dict[str, tuple[str, ...]], required: tuple[str, ...]):
        self.path, self.issues, self.wanted, self.required = path, issues, wanted, required
        self.line = 0
        self.col: dict[str, int | None] = {}

    def __enter__(self) -> _Rows:
        try:
            self.raw = open_regular(self.path, error=ProfileReadError)
        except OSError as e:
            raise ProfileReadError(f"cannot read {self.path.name}: {e.strerror or e}", file=str(self.path)) from e
        head = self.raw.peek(2)[:2] if hasattr(self.raw, "peek") else b""
        utf16 = head in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
        self.text = io.TextIOWrapper(self.raw, encoding="utf-16" if utf16 else "utf-8-sig", errors="replace",
                                     newline="")
        self.rows = self._rows()
        try:
            next(self.rows)  # reads and checks the header, sets col
        except BaseException:
            self.text.close()
            raise
        return self

    def __iter__(self) -> Iterator[tuple[int, list[str]]]:
        return self.rows  # type: ignore[return-value]

    def __exit__(self, *exc: object) -> None:
        self.text.close()

    def _lines(self) -> Iterator[str]:
        while True:
            text = self.text.readline(LINE_CHARS + 1)
            if not text:
                return
            self.line += 1
            if len(text) > LINE_CHARS:
                self._fail(f"line longer than {LINE_CHARS:,} characters: not a profiler table")
            if not text.endswith("\n"):
                self._fail("the file ends inside a row: it was cut short (the export was interrupted or the "
                           "copy is incomplete)")
            if "\x00" in text:
                self._fail("a NUL byte: the file is damaged")
            if "\ufffd" in text:
                self.issues.warn(f"{self.path}:{self.line}", "bytes that are not UTF-8 were replaced by U+FFFD",
                                 kind=f"{self.path.name} not UTF-8")
            yield text

    def _fail(self, message: str) -> NoReturn:
        raise ProfileReadError(f"{self.path.name}: {message}", file=str(self.path), line=self.line, hint=HINT)

    def _rows(self) -> Iterator[tuple[int, list[str]] | None]:
        reader = csv.reader(self._lines())
        try:
            header = next(reader, None)
            if header is None:
                self._fail("empty (no header)")
            _check_header(header, self.path)
            table = Table(self.path, [c.strip().lstrip("\ufeff") for c in header], [])
            col, _ = columns(table, self.wanted)
            absent = [self.wanted[k][0] for k in self.required if col[k] is None]
            if absent:
                self._fail(f"lacks the column(s) {', '.join(absent)}; it has: {', '.join(table.header)}")
            self.col = {k: (table.index[v] if v is not None else None) for k, v in col.items()}
            width = len(header)
            yield None
            for cells in reader:
                if not any(c.strip() for c in cells):
                    continue
                if len(cells) != width:
                    self._fail(f"a row of {len(cells)} cells under a header of {width}: cut short or not this table")
                yield self.line, cells
        except csv.Error as e:
            self._fail(f"not a readable CSV file: {e}")
