"""TIMES: a table of device times per node or per op, and how each task of a plan finds its row.

A CSV (docs/profile.md "TIMES"):

    node,us,cores          op,us,cores
    mm,120.5,24            aten.mm.default,120.5,24
    abs_1,3.2              MatMul,118
    *,2.0                  *,2.0

The first column names an FX node or GE op of the run (``node``) or an op target or GE type, every
node of that op (``op``); ``us`` is its device time in microseconds; ``cores`` (optional) how many
AI cores it occupies. A row ``*`` gives the time of every kernel no other row covers. Lines starting
with ``#`` are comments. A kernel that no row covers is *unmatched*: it is counted and listed, and
replayed as taking no time — never silently.

Every problem with the file is a :class:`TimesError` naming the file and line (exit 2): a time is
a finite number from 0 to ``MAX_US`` (an hour: no kernel takes longer, and sums of a million such
rows stay finite), cores from above 0 to ``MAX_CORES``. The file is read a line at a time (at most
``MAX_BYTES`` in all, ``MAX_LINE`` a line) and only its rows are kept, so a table near the size
limit takes about what its rows need (docs/reliability.md), not several copies of its text.
"""

from __future__ import annotations

import csv
import difflib
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

from airctl.errors import AirctlError
from airctl.predict.plan import KERNEL, ReplayPlan, Task
from airctl.predict.row_store import RowStore
from airctl.safe_files import open_regular, too_large

MAX_BYTES = 64 * 1024 * 1024  # a row per node of a 1M-node graph fits many times over
MAX_FIELD = 4096  # characters of one name
MAX_LINE = 2 * MAX_FIELD + 200  # characters of one line
MAX_US = 3.6e9  # µs: an hour, more than any kernel takes
MAX_CORES = 1e6
KEYWORDS = ("estimate",)  # what --times takes besides a file or folder
HINT = "a CSV with a header `node,us[,cores]` or `op,us[,cores]`, one row per node or op (docs/profile.md)"


class TimesError(AirctlError):
    """A TIMES table that cannot be used."""


@dataclass(frozen=True, slots=True)
class Row:
    us: float
    cores: float | None
    line: int


@dataclass
class Resolved:
    """Each task's device time (µs) and cores, and which kernels the table did not cover."""

    durations_us: list[float]
    cores: list[float | None]
    unmatched: list[str]  # kernel names
    matched_rows: set[str] = field(default_factory=set)  # keys of the rows that matched something


@dataclass
class TimesTable:
    source: str  # what ``meta.times_from`` says: the file, "estimate", a profiler folder
    keyed_by: str  # "node" or "op": what the CSV's first column named
    rows: dict[str, Row] = field(default_factory=dict)  # by node name
    op_rows: dict[str, Row] = field(default_factory=dict)  # by op target or GE type
    default: Row | None = None
    label: str = "table"  # "table", "estimate" or "profile"

    def lookup(self, task: Task) -> Row | None:
        """The row that gives ``task`` its time: by name (a GE op by its FX nodes too), else by op,
        else the ``*`` row."""
        if task.name in self.rows:
            return self.rows[task.name]
        found = [self.rows[a] for a in task.aliases if a in self.rows]
        if found:  # a GE op made of several FX nodes takes their sum
            cores = [r.cores for r in found if r.cores is not None]
            return Row(sum(r.us for r in found), max(cores) if cores else None, found[0].line)
        if (row := self._op_row(task.op)) is not None:
            return row
        by_fx = [row for op in task.meta.get("fx_ops") or () if (row := self._op_row(op)) is not None]
        if by_fx:  # a GE op by the ops of the FX nodes it came from (an `op,us` table of ATen targets)
            cores = [r.cores for r in by_fx if r.cores is not None]
            return Row(sum(r.us for r in by_fx), max(cores) if cores else None, by_fx[0].line)
        return self.default

    def _op_row(self, op: str) -> Row | None:
        return next((self.op_rows[k] for k in op_keys(op) if k in self.op_rows), None)

    def names(self) -> set[str]:
        return set(self.rows) | set(self.op_rows)

    def resolve(self, plan: ReplayPlan) -> Resolved:
        out = Resolved([0.0] * len(plan.tasks), [None] * len(plan.tasks), [])
        for t in plan.tasks:
            if t.kind != KERNEL:
                continue
            row = self.lookup(t)
            if row is None:
                out.unmatched.append(t.name)
                continue
            out.durations_us[t.index] = row.us
            out.cores[t.index] = row.cores
            out.matched_rows.update(k for k in (t.name, *t.aliases) if k in self.rows)
            out.matched_rows.update(k for op in (t.op, *(t.meta.get("fx_ops") or ())) for k in op_keys(op)
                                    if k in self.op_rows)
        return out


def op_keys(op: str) -> list[str]:
    """The names an op row may use for ``op``: the target, without its overload, without ``torch.ops.``;
    an in-place variant (TorchAir's reinplace pass makes ``add_`` of ``add``) runs its op's kernel.

    >>> op_keys("aten.mm.default")
    ['aten.mm.default', 'aten.mm']
    >>> op_keys("aten.add_.Tensor")
    ['aten.add_.Tensor', 'aten.add_', 'aten.add.Tensor', 'aten.add']
    """
    keys = [op]
    bare = op.removeprefix("torch.ops.")
    if bare != op:
        keys.append(bare)
    parts = bare.split(".")
    if len(parts) == 3:
        keys.append(".".join(parts[:2]))
        base = parts[1]
        if base.endswith("_") and not base.endswith("__"):
            keys += [f"{parts[0]}.{base[:-1]}.{parts[2]}", f"{parts[0]}.{base[:-1]}"]
    return keys


def read_times_csv(path: Path) -> TimesTable:
    """The table in ``path``; :class:`TimesError` with file and line for anything unusable."""
    file = str(path)
    try:
        f = open_regular(path, error=TimesError, hint=HINT)
    except FileNotFoundError:
        raise _missing(path) from None
    with f:
        table: TimesTable | None = None
        cols: list[str] = []
        read = 0
        for n, raw in enumerate(iter(lambda: f.readline(4 * MAX_LINE + 2), b""), start=1):
            read += len(raw)
            if read > MAX_BYTES:
                raise too_large(path, MAX_BYTES, "TIMES table", TimesError, HINT)
            line = raw.decode("utf-8-sig" if n == 1 else "utf-8", errors="replace").rstrip("\r\n")
            if not raw.endswith(b"\n") and len(raw) > 4 * MAX_LINE:
                raise TimesError(f"line too long (over {MAX_LINE} characters)", file=file, line=n, hint=HINT)
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if table is None:
                cols = [c.strip().lower() for c in _fields(line, file, n)]
                table = _header(cols, line, file, n)
            else:
                _row(table, cols, line, file, n)
    if table is None:
        raise TimesError("empty TIMES table", file=file, hint=HINT)
    if not table.rows and not table.op_rows and table.default is None:
        raise TimesError("no rows after the header", file=file, hint=HINT)
    return table


def _missing(path: Path) -> TimesError:
    """No such file: said with the keyword meant when ``path`` looks like a mistyped one."""
    text = str(path)
    if "/" in text or "\\" in text or "." in Path(text).name:
        return TimesError("no such file", file=text, hint="--times takes a CSV, a torch_npu profiler folder or "
                          "`estimate`")
    close = difflib.get_close_matches(text.lower(), KEYWORDS, n=1, cutoff=0.6)
    return TimesError(f"no such file, and not a TIMES keyword ({', '.join(KEYWORDS)})", file=text,
                      hint=f"did you mean `--times {close[0]}`?" if close else
                      "--times takes a CSV, a torch_npu profiler folder or `estimate`")


def _header(cols: list[str], line: str, file: str, n: int) -> TimesTable:
    if len(cols) > 3 or len(cols) < 2 or cols[0] not in ("node", "op") or cols[1] != "us" or \
            (len(cols) == 3 and cols[2] != "cores"):
        shown = line if len(line) <= 80 else line[:77] + "..."
        raise TimesError(f"unexpected header {shown!r}", file=file, line=n, hint=HINT)
    table = TimesTable(file, cols[0])
    if cols[0] == "node":
        table.rows = RowStore(Row)  # type: ignore[assignment]  # a Mapping: read, never assigned to
    else:
        table.op_rows = RowStore(Row)  # type: ignore[assignment]
    return table


def _row(table: TimesTable, cols: list[str], line: str, file: str, n: int) -> None:
    fields = [f.strip() for f in _fields(line, file, n)]
    if len(fields) < 2 or len(fields) > len(cols):
        raise TimesError(f"expected {len(cols)} columns ({','.join(cols)}), found {len(fields)}", file=file,
                         line=n, hint=HINT)
    name = fields[0]
    if not name or len(name) > MAX_FIELD:
        raise TimesError("a row needs a name (at most 4096 characters)", file=file, line=n, hint=HINT)
    row = Row(_number(fields[1], "us", file, n), _number(fields[2], "cores", file, n, positive=True)
              if len(fields) > 2 and fields[2] else None, n)
    if name == "*":
        table.default = row
        return
    rows: RowStore = table.rows if table.keyed_by == "node" else table.op_rows  # type: ignore[assignment]  # _header
    first = rows.add(name, row.us, row.cores, n)
    if first is not None:
        raise TimesError(f"{name!r} is given twice (first at line {first.line})", file=file, line=n,
                         hint="keep one row per name")


def _fields(line: str, file: str, n: int) -> list[str]:
    if len(line) > MAX_LINE:
        raise TimesError(f"line too long ({len(line)} characters)", file=file, line=n, hint=HINT)
    if '"' not in line:
        return line.split(",")
    try:
        return next(csv.reader(io.StringIO(line)))
    except (csv.Error, StopIteration) as e:
        raise TimesError(f"not CSV: {e}", file=file, line=n, hint=HINT) from None


def _number(text: str, column: str, file: str, n: int, positive: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise TimesError(f"{column} is not a number: {shown!r}", file=file, line=n, hint=HINT) from None
    top, unit = (MAX_CORES, "") if column == "cores" else (MAX_US, " µs (an hour)")
    if not math.isfinite(value) or value < 0 or (positive and value == 0) or value > top:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise TimesError(f"{column} must be a finite number {'above' if positive else 'at least'} 0 and at most "
                         f"{top:g}{unit}, not {shown}", file=file, line=n, hint=HINT)
    return value
