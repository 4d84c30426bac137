"""The stages of one imported graph, in TorchAir's order, each from the best file that shows it.

The stage names are ``airctl compile``'s (docs/ledger.md), so an imported ledger reads like a
captured one::

    dynamo, aot-<kind>, after:<fx pass> ..., fx-final,
        ge-original, ge:after:<ge pass> ..., ge-optimized        (max-autotune)
        after:<aclgraph pass> ...                                 (reduce-overhead)

============================  ======================================================================
stage                         read from (first that exists)
============================  ======================================================================
``dynamo``                    TCD ``model__K/dynamo_out_graph.txt``; the log's "after dynamo out"
``aot-<kind>``                TCD ``000_aot_<phase>_graph.txt``; the log's "graph: graph():"
``after:<pass>``              TCD ``NNN_..._graph_after_<pass>.txt``; the log (below)
``fx-final``                  the log's "after fx graph optimization"; else the last FX pass's graph
``ge-original``, ``ge-opt…``  TCD ``original_ge_graph``/``optimized_ge_graph``; the GE dumps
``ge:after:<pass>``           TCD ``NNN_..._graph_after_<pass>.<type>``
============================  ======================================================================

From a log alone, a pass's graph is known only where TorchAir listed it (custom passes, the
final graph). Between two listed graphs the pass tables decide: when both graphs are equal,
every pass between changed nothing (their stages share the earlier snapshot, as in a captured
ledger); when exactly one pass between reports a change, it made the later graph; otherwise
those passes get no stage and the graph says so (``notes``). Pass times come from the tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.io.artifacts import GeDump, TcdModel
from airctl.io.torchair_log import FX_PASSES, LogUnit, PassTable
from airctl.modes import Mode

DUMP_PREFERENCE = {"pbtxt": 0, "txt": 1, "py": 2}  # control edges and attributes: pbtxt/txt; py has neither


@dataclass
class StageSource:
    """Where one stage's graph comes from, and how to read it (lazily; the graph is kept once read)."""

    name: str
    how: str  # code (print_readable file), listing (log text), graph (any graph file), same (previous, unchanged)
    origin: str  # file, or file:line — shown in errors and kept in the ledger
    path: Path | None = None
    text: str | None = None
    line: int = 1
    seconds: float | None = None
    changed: bool | None = None  # declared (from the log's pass tables); None: the writer compares
    _graph: Graph | None = field(default=None, repr=False)

    def load(self) -> Graph | None:
        """The stage's graph (None for ``same``); raises GraphReadError naming the file and line."""
        if self._graph is not None or self.how == "same":
            return self._graph
        if self.how == "listing":
            from airctl.io.fx_listing import parse_fx_listing

            self._graph = parse_fx_listing(self.text or "", self.origin.rsplit(":", 1)[0], first_line=self.line)
        elif self.how == "code":
            from airctl.io.fx_code import parse_fx_code

            self._graph = parse_fx_code(_read_text(self.path), str(self.path))
        else:
            from airctl.io.read import read_graph

            self._graph = read_graph(self.path)
        return self._graph

    def readable(self) -> str | None:
        """The stage's text as TorchAir wrote it (FX code or listing); GE stages get an op listing."""
        if self.how == "listing":
            return self.text
        if self.how == "code" and self.path is not None:
            return _read_text(self.path)
        return None


@dataclass
class GraphPlan:
    pid: int | None
    name: str | None  # graph_N
    rank: int | None = None
    phase: str | None = None
    unit: LogUnit | None = None
    log: str | None = None  # the log file the unit came from
    tcd: tuple[TcdModel, str] | None = None  # (model__K, phase)
    dumps: list[GeDump] = field(default_factory=list)
    files: list[tuple[Path, str]] = field(default_factory=list)  # standalone files and their stage name
    kind: str = "inference"
    mode: Mode = Mode.MAX_AUTOTUNE
    k: int = 0
    id: str = ""
    stages: list[StageSource] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _read_text(path: Path | None) -> str:
    if path is None:
        raise GraphReadError("no file")
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise GraphReadError(f"cannot read: {e.strerror or e}", file=str(path)) from e


def _code(name: str, path: Path, seconds: float | None = None) -> StageSource:
    return StageSource(name, "code", str(path), path=path, seconds=seconds)


def _listing(name: str, log: str | None, listing: Any) -> StageSource:
    return StageSource(name, "listing", f"{log}:{listing.line}", text=listing.text, line=listing.line)


def _graph(name: str, path: Path) -> StageSource:
    return StageSource(name, "graph", str(path), path=path)


def _same(name: str, table: PassTable, log: str | None) -> StageSource:
    return StageSource(name, "same", f"{log}:{table.line}", line=table.line, seconds=table.seconds, changed=False)


def _equal(a: StageSource | None, b: StageSource | None) -> bool | None:
    if a is None or b is None:
        return None
    try:
        ga, gb = a.load(), b.load()
    except GraphReadError:
        return None
    return ga is not None and gb is not None and ga.structure() == gb.structure()


class _Seconds:
    """Pass times from the log's tables, by pass name, each used once in order."""

    def __init__(self, unit: LogUnit | None) -> None:
        self.tables: dict[str, list[PassTable]] = {}
        for t in unit.passes if unit else []:
            self.tables.setdefault(t.name, []).append(t)

    def take(self, name: str) -> float | None:
        found = self.tables.get(name)
        return found.pop(0).seconds if found else None


def _between(start: StageSource | None, unit: LogUnit, fx: bool, end: StageSource | None, log: str | None,
             notes: list[str]) -> list[StageSource]:
    """Stages for the passes of ``unit`` known only by their tables, between two listed graphs (module
    docstring): TorchAir's FX passes (``fx``), else the aclgraph passes."""
    listed = {x.site[len("after:"):]: _listing(x.site, log, x) for x in unit.listings
              if x.site.startswith("after:") and (x.site[len("after:"):] in FX_PASSES) == fx}
    tables = [t for t in unit.passes if (t.name in FX_PASSES) == fx]
    out: list[StageSource] = []
    segment: list[PassTable] = []
    prev = start

    def resolve(upto: StageSource | None) -> None:
        if not segment:
            return
        same = _equal(prev, upto)
        changed = [t for t in segment if t.changed]
        if same or (upto is None and not changed and prev is not None):
            out.extend(_same(f"after:{t.name}", t, log) for t in segment)
        elif same is False and len(changed) == 1:
            for t in segment:
                if t is changed[0]:
                    out.append(replace(upto, name=f"after:{t.name}", seconds=t.seconds, changed=True))
                else:
                    out.append(_same(f"after:{t.name}", t, log))
        else:
            one = len(segment) == 1
            notes.append(f"the log lists no graph after {', '.join(t.name for t in segment)}: "
                         f"{'no stage for it' if one else 'no stages for them'}")
        segment.clear()

    for table in tables:
        if table.name in listed:
            segment.append(table)
            known = listed[table.name]
            resolve(known)
            if out and out[-1].name == f"after:{table.name}":
                out.pop()  # the listing itself is better than a derived stage
            known.seconds = table.seconds
            out.append(known)
            prev = known
        else:
            segment.append(table)
    resolve(end)
    return out


def _dump_stage(g: GraphPlan, which: str, name: str) -> StageSource | None:
    dumps = sorted((d for d in g.dumps if d.which == which), key=lambda d: DUMP_PREFERENCE[d.type])
    return _graph(name, dumps[0].path) if dumps else None


def graph_stages(g: GraphPlan, mode: Mode) -> list[StageSource]:
    """The stages of one graph plan, in TorchAir's order (the table in the module docstring)."""
    unit, log = g.unit, g.log
    model, files = (g.tcd[0], g.tcd[0].phases[g.tcd[1]]) if g.tcd else (None, [])
    seconds = _Seconds(unit)
    out: list[StageSource] = [_graph(what, p) for p, what in g.files]
    if g.kind != "backward":
        if model is not None and model.dynamo is not None:
            out.append(_code("dynamo", model.dynamo))
        elif unit is not None and (listing := unit.listing("dynamo")) is not None:
            out.append(_listing("dynamo", log, listing))
    ge_at = next((i for i, f in enumerate(files) if f.what == "original_ge_graph"), len(files))
    fx_files, ge_files = files[:ge_at], files[ge_at:]
    aot = next((f for f in fx_files if f.what == "graph"), None)
    fx_passes = [f for f in fx_files if f.pass_name in FX_PASSES]
    acl_passes = [f for f in fx_files if f.pass_name is not None and f.pass_name not in FX_PASSES]
    first = None
    if aot is not None:
        first = _code(f"aot-{g.kind}", aot.path)
    elif unit is not None:
        listing = unit.listing("aot") or next((x for x in unit.listings if x.site.startswith("before:")), None)
        first = _listing(f"aot-{g.kind}", log, listing) if listing is not None else None
    if first is not None:
        out.append(first)
    final_listing = unit.listing("fx-final") if unit is not None else None
    final = _listing("fx-final", log, final_listing) if final_listing is not None else None
    if fx_passes:
        out.extend(_code(f"after:{f.pass_name}", f.path, seconds.take(f.pass_name)) for f in fx_passes)
    elif unit is not None:
        out.extend(_between(first, unit, True, final, log, g.notes))
    if final is not None:
        out.append(final)
    elif fx_passes:
        last = fx_passes[-1]
        out.append(_code("fx-final", last.path))
    elif first is not None and aot is not None:
        out.append(_code("fx-final", aot.path))
    elif not mode.is_ge and (src := _dump_stage(g, "original", "fx-final")) is not None:
        out.append(src)
    if mode.is_ge:
        out.extend(_ge_stages(g, ge_files))
    else:
        out.extend(_acl_stages(g, acl_passes, seconds, final, log))
    return out


def _ge_stages(g: GraphPlan, ge_files: list) -> list[StageSource]:
    out: list[StageSource] = []
    for f in ge_files:
        if f.what == "original_ge_graph":
            out.append(_graph("ge-original", f.path))
        elif f.what == "optimized_ge_graph":
            out.append(_graph("ge-optimized", f.path))
        elif f.pass_name is not None:
            out.append(_graph(f"ge:after:{f.pass_name}", f.path))
    if not any(s.name == "ge-original" for s in out) and (src := _dump_stage(g, "original", "ge-original")):
        out.insert(0, src)
    if not any(s.name == "ge-optimized" for s in out) and (src := _dump_stage(g, "optimized", "ge-optimized")):
        out.append(src)
    return out


def _acl_stages(g: GraphPlan, acl_passes: list, seconds: _Seconds, final: StageSource | None,
                log: str | None) -> list[StageSource]:
    if acl_passes:
        return [_code(f"after:{f.pass_name}", f.path, seconds.take(f.pass_name)) for f in acl_passes]
    unit = g.unit
    if unit is not None and unit.passes:
        end_listing = unit.listing("aclgraph-final")
        end = _listing("aclgraph-final", log, end_listing) if end_listing is not None else None
        stages = _between(final, unit, False, end, log, g.notes)
        if stages:
            return stages
    src = _dump_stage(g, "optimized", "aclgraph-optimized")
    return [src] if src is not None else []
