"""report.html's provenance: every FX node's origin chain, so that the viewer links a lane task, a GE
op or an FX node to the pass that made or moved it and the user's source line, and a source line to
every node and task it made.

The chains are :func:`airctl.diff.chain.graph_chains`' (the computation ``airctl show --node``
prints, with the run's profiled tasks from :func:`airctl.diff.chain_tasks.tasks_of`), written
compactly; the viewer (``viewer/provenance.js``) builds its lookups from them on the first click.
Per graph, with strings shared through ``strings`` (an index; -1 for none)::

    {"stages": [FX stage names], "strings": [...], "passes": [[stage, name, by, where], ...],
     "chains": [[names, events, origin, origin_note, source, module, dynamo, ge, ge_note, tasks], ...]}

    names:  [k, name, k, name, ...]  the node's name from FX stage k on (null: gone from there)
    events: [[k, event, pass, detail], ...]  created / moved / renamed / replaced / removed at stage k
    origin: a pass (-1: none); dynamo: [[node, ...], op, how] or 0
    ge:     [stage, name, op, stream, ...] (flat; ``stream`` -1 when none); tasks: [[task, stream, runs, total_us]]

A graph whose snapshots cannot be read is left out and named in ``errors``: the report of a crashed
run still opens.

The Assignment tab is :func:`airctl.diff.assignment.assignment_table` on the same snapshots
(:func:`assignment_payload`), each node a row ``[node, op, category, detail, static_kernel,
super_kernel, stream]`` (``category``: an index into ``categories``), at most :data:`MAX_ROWS` a graph.
"""

from __future__ import annotations

from typing import Any

from airctl.diff.assignment import CATEGORIES, assignment_table
from airctl.diff.chain import Chain, PassRef, StageStep, graph_chains
from airctl.diff.chain_graphs import Snapshots
from airctl.diff.chain_tasks import tasks_of
from airctl.errors import AirctlError
from airctl.ledger.reader import Ledger


class _Table:
    """Strings and passes numbered in order of first use."""

    def __init__(self) -> None:
        self.strings: dict[str, int] = {}
        self.passes: dict[tuple[Any, ...], int] = {}

    def s(self, value: str | None) -> int:
        return -1 if value is None else self.strings.setdefault(value, len(self.strings))

    def p(self, ref: PassRef | None) -> int:
        if ref is None:
            return -1
        row = (self.s(ref.stage), self.s(ref.name), self.s(ref.by), self.s(ref.where))
        return self.passes.setdefault(row, len(self.passes))


def _names(steps: list[StageStep]) -> list[Any]:
    out: list[Any] = []
    last: Any = None
    started = False
    for k, step in enumerate(steps):
        if step.name != last and (started or step.name is not None):
            out += [k, step.name]
            last, started = step.name, True
    return out


def _compact(c: Chain, t: _Table) -> list[Any]:
    events = [[next(k for k, s in enumerate(c.stages) if s is e), e.event, t.p(e.by), e.detail] for e in c.changes]
    dynamo = [c.dynamo["nodes"], c.dynamo["op"], t.s(c.dynamo["how"])] if c.dynamo else 0
    ge: list[Any] = []
    for g in c.ge_ops:
        ge += [t.s(g["stage"]), g["name"], t.s(g["op"]), t.s(g.get("stream"))]
    tasks = [[r["task"], r["stream"], r["count"], r["total_us"]] for r in c.tasks]
    return [_names(c.stages), events, t.p(c.origin), t.s(c.origin_note), t.s(c.source), t.s(c.module), dynamo, ge,
            t.s(c.ge_note), tasks]


MAX_ROWS = 20_000  # assignment rows per graph in the page (show --assignment --json has all)


def assignment_payload(ledger: Ledger, snaps: Snapshots) -> dict[str, Any]:
    """The Assignment tab's data (see the module docstring); an unreadable run's is its error."""
    try:
        table = assignment_table(ledger, snaps)
    except (AirctlError, OSError, ValueError) as e:
        return {"error": str(e)}
    cat = {c: k for k, c in enumerate(CATEGORIES)}
    for g in table["graphs"]:
        g["listed"] = min(len(g["nodes"]), MAX_ROWS)
        g["nodes"] = [[r["node"], r["op"], cat[r["category"]], r["detail"], r["static_kernel"], r["super_kernel"],
                       r["stream"]] for r in g["nodes"][:MAX_ROWS]]
    return {**table, "categories": list(CATEGORIES)}


def provenance_payload(ledger: Ledger, snaps: Snapshots) -> dict[str, Any]:
    """``{"graphs": {id: ...}, "profile": trace file or None, "errors": [...]}`` (see the module docstring);
    ``snaps``: the ledger's snapshots, with what the report loaded and matched already."""
    errors: list[str] = []
    try:
        tasks = tasks_of(ledger.root)
    except AirctlError as e:
        tasks = None
        errors.append(f"profiled tasks left out: {e}")
    graphs: dict[str, Any] = {}
    for gid in ledger.graph_ids():
        t = _Table()
        try:
            fx, chains = graph_chains(ledger, gid, tasks, snaps)
        except (AirctlError, OSError, ValueError) as e:
            errors.append(f"graph {gid}: {e}")
            continue
        if not chains:
            continue
        rows = [_compact(c, t) for c in chains]
        graphs[gid] = {"stages": [s.name for s in fx], "strings": list(t.strings), "passes": list(t.passes),
                       "chains": rows}
    return {"graphs": graphs, "profile": tasks["file"] if tasks else None, "errors": errors}
