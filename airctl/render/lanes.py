"""The lane view of a stream plan: one column per stream, ops in program order top to bottom.

The static twin of the profile timeline (docs/profile.md): where the timeline shows when each op
*ran* on its stream, the lane view shows where each op *sits* in the plan, before anything runs.
Scopes are bands in their stream's lane, every record → wait (FX sync edge; in GE, a control edge
between two streams) is an arrow across lanes, and the verifier's findings are marked on the ops
they concern (a race on the reading op, with a dotted arrow from the value it reads).

**Streams.** FX: the stream plan as the verifier sees it under ``mode``
(:func:`airctl.verify.plan.build_plan`; a ``scope_enter`` in the lane of the stream it opens).
GE: the ``_user_stream_label`` attribute (``node.stream``). Graph inputs are not drawn.

**Rows.** A node's row is one below everything that orders it: the node before it in its lane
(program order), the record it waits for, its control inputs, and, where the backend synchronises
them (GE graphs, FX in max-autotune), its data inputs from other lanes. In reduce-overhead a read
from another lane is *not* an ordering, so an unsynchronised reader can sit level with (or above)
the op it reads: the race is visible as well as marked. A ``scope_enter`` or wait then moves down
to just above the op it precedes. Nodes are visited in file order; an edge pointing backwards
(only malformed or unsorted dumps have them) is ignored.

**Folding** (big graphs, ``fold="module"`` or ``"stream"``): consecutive plain ops of one lane with
the same key (module path cut to ``depth`` parts, or nothing for ``stream``) share one row, a *run*,
as long as nothing from another lane orders a later member below the run's row. Scope, record and
wait nodes, and ops with a finding, are never folded, so every arrow and mark stays.

>>> from airctl.graph.model import Node
>>> g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder"),
...     Node("enter", "air.scope_enter.default", attrs={"args": [["_user_stream_label"], ["s1"]]}),
...     Node("mm", "aten.mm.default", ["x", "x"], stream="s1"),
...     Node("rec", "air.record.default", stream="s1"),
...     Node("exit", "air.scope_exit.default", stream="s1"),
...     Node("wait", "air.wait.default", ["rec"]),
...     Node("sub", "aten.sub.Tensor", ["x", "mm"]),
...     Node("output", "output", ["sub"], kind="output")])
>>> v = build_lanes(g, "max-autotune")
>>> v.streams, [(n.name, v.lane[i]) for i, n in enumerate(g.nodes) if v.lane[i] >= 0]
([None, 's1'], [('enter', 1), ('mm', 1), ('rec', 1), ('exit', 1), ('wait', 0), ('sub', 0), ('output', 0)])
>>> [v.row[i] for i in range(1, len(g.nodes))]
[0, 1, 2, 3, 3, 4, 5]
>>> [(g.nodes[s].name, g.nodes[d].name) for s, d in v.arrows], [(b.top, b.bottom) for b in v.bands]
([('rec', 'wait')], [(0, 3)])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from airctl.errors import AirctlError
from airctl.graph.model import Graph
from airctl.graph.refs import Refs
from airctl.graph.roles import Role, role_of_op
from airctl.io.gc_pause import gc_paused
from airctl.modes import Mode
from airctl.render.order import BEFORE  # sit right above the op they precede
from airctl.verify.findings import Finding

FOLD_LIMIT = 2000  # nodes: from here on, airctl dump folds the lane view by module (like DOT_LIMIT)
FOLDS = ("module", "stream")
GE_INPUTS = frozenset({"Data", "RefData", "Variable", "Const", "Constant"})
RACE = "race_cross_stream_without_wait"
TOP_OPS = 4


@dataclass
class Band:
    lane: int
    top: int  # row of the scope_enter
    bottom: int  # row of the scope_exit (the last row when the scope is never closed)
    stream: str
    enter: int  # node index
    exit: int | None


@dataclass
class FoldedRun:
    lane: int
    row: int
    members: list[int] = field(default_factory=list)  # node indices, program order
    key: str = ""

    def label(self, graph: Graph) -> str:
        nodes = graph.nodes
        ops: Counter[str] = Counter()
        for op, k in Counter(nodes[i].op for i in self.members).items():  # each distinct op shortened once
            ops[op.split(".")[1] if op.startswith("aten.") else op] += k  # first seen first, as counted one by one
        top = ", ".join(f"{op}\u00d7{k}" if k > 1 else op for op, k in ops.most_common(TOP_OPS))
        head = f"{self.key} \u00b7 " if self.key else ""
        return f"{head}{len(self.members)} ops: {top}"


@dataclass
class Mark:
    node: int
    severity: str
    rule: str
    message: str
    primary: bool  # the op the finding is about (a race's reader); others are involved


@dataclass
class Lanes:
    graph: Graph
    mode: Mode  # the semantics it is drawn with; npugraph_ex labelled as itself
    streams: list[str | None]  # lane -> stream, the default stream first
    lane: list[int]  # per node, -1 when not drawn (graph inputs)
    row: list[int]  # per node (a folded node: its run's row), -1 when not drawn
    rows: int
    run: list[int]  # per node: its run (index into runs), -1 when drawn on its own
    roles: list[Role] = field(default_factory=list)  # graph.roles.role_of per node
    runs: list[FoldedRun] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    arrows: list[tuple[int, int]] = field(default_factory=list)  # record -> wait (node indices)
    races: list[tuple[int, int]] = field(default_factory=list)  # value read -> racy reader
    marks: list[Mark] = field(default_factory=list)

    def is_folded(self) -> bool:
        return bool(self.runs)


def _streams(graph: Graph, mode: Mode) -> tuple[list[str | None], list[Role], list[tuple[int, int | None, str]]]:
    """Per-node stream, roles, and the stream scopes (enter, exit, label) of the plan."""
    if graph.dialect == "ge":
        return [n.stream for n in graph.nodes], [role_of_op(n.op, n.kind) for n in graph.nodes], []
    from airctl.verify.plan import build_plan

    plan = build_plan(graph, mode)
    streams = list(plan.stream)
    scopes = []
    for s in plan.scopes:
        if s.label is not None:
            streams[s.enter] = s.label
            scopes.append((s.enter, s.exit, s.label))
    return streams, plan.roles, scopes


def _drawn(graph: Graph, roles: list[Role]) -> list[bool]:
    if graph.dialect == "ge":
        return [not (n.op in GE_INPUTS and not n.control_inputs) for n in graph.nodes]
    inputs = Role.INPUT
    return [r is not inputs for r in roles]


def build_lanes(graph: Graph, mode: Mode = Mode.MAX_AUTOTUNE, findings: Iterable[Finding] = (),
                fold: str | None = None, depth: int = 2) -> Lanes:
    """The lane view of ``graph`` under ``mode`` (see the module docstring); linear in nodes plus edges."""
    if fold is not None and fold not in FOLDS:
        raise AirctlError(f"cannot fold the lane view by {fold!r}", hint=f"choose one of: {', '.join(FOLDS)}")
    asked = Mode.parse(mode)
    with gc_paused():  # many small lists, no cycles: see airctl.io.gc_pause
        view = _build(graph, asked.semantics, findings, fold, depth)
    if asked.is_npugraph_ex:
        view.mode = Mode.NPUGRAPH_EX  # drawn with aclgraph's semantics, labelled with the mode asked for
    return view


def _build(graph: Graph, mode: Mode, findings: Iterable[Finding], fold: str | None, depth: int) -> Lanes:
    nodes = graph.nodes
    n = len(nodes)
    refs = Refs.of(graph)  # each distinct reference parsed once (the graph's pinned table, if any)
    index = refs.index
    streams, roles, scopes = _streams(graph, mode)
    drawn = _drawn(graph, roles)
    lanes_of: dict[str | None, int] = {None: 0}
    for i in range(n):
        if drawn[i]:
            lanes_of.setdefault(streams[i], len(lanes_of))
    lane = [lanes_of[streams[i]] if drawn[i] else -1 for i in range(n)]
    view = Lanes(graph, mode, list(lanes_of), lane, [-1] * n, 0, [-1] * n, roles)
    view.marks, marked = _marks(graph, index, findings, view)
    sync_cross = graph.dialect == "ge" or mode.meaning.syncs_data_edges
    preds = _orderings(graph, refs, lane, drawn, roles, sync_cross, view)
    _rows(view, roles, preds, drawn, marked, fold, depth)
    for enter, exit_, label in scopes:
        bottom = view.row[exit_] if exit_ is not None else view.rows - 1
        view.bands.append(Band(lanes_of.get(label, lane[enter]), view.row[enter], bottom, label, enter, exit_))
    return view


def _marks(graph: Graph, index: dict[str, int], findings: Iterable[Finding], view: Lanes
           ) -> tuple[list[Mark], set[int]]:
    marks: list[Mark] = []
    for f in findings:
        at = [index[name] for name in f.nodes if name in index]
        if not at:
            continue
        primary = at[1] if f.rule == RACE and len(at) > 1 else at[0]
        if f.rule == RACE and len(at) > 1:
            view.races.append((at[0], at[1]))
        for i in dict.fromkeys(at):
            marks.append(Mark(i, f.severity, f.rule, f.message, i == primary))
    return marks, {m.node for m in marks}


def _orderings(graph: Graph, refs: Refs, lane: list[int], drawn: list[bool], roles: list[Role],
               sync_cross: bool, view: Lanes) -> list[list[int]]:
    """For each node, the earlier nodes that order it besides its lane predecessor; fills ``view.arrows``."""
    preds: list[list[int]] = [[] for _ in graph.nodes]
    record, wait = Role.RECORD, Role.WAIT
    records = {i for i, r in enumerate(roles) if r is record}
    data_in, ctrl_in = refs.data_inputs(graph), refs.inputs(graph)[1]  # the graph's shared producer lists
    for d in range(len(graph.nodes)):
        if not drawn[d]:
            continue
        is_wait = roles[d] is wait
        for s in data_in[d]:
            if s < 0 or not drawn[s] or s >= d:
                continue
            if is_wait and s in records:
                preds[d].append(s)
                view.arrows.append((s, d))
            elif sync_cross or lane[s] == lane[d]:
                preds[d].append(s)
        for s in ctrl_in[d]:
            if s < 0 or not drawn[s] or s >= d:
                continue
            preds[d].append(s)
            if lane[s] != lane[d]:
                view.arrows.append((s, d))
    return preds


def _fold_key(graph: Graph, i: int, fold: str, depth: int) -> str:
    if fold == "stream":
        return ""
    module = graph.nodes[i].module
    return ".".join(module.split(".")[:depth]) if module else "(top)"


def _rows(view: Lanes, roles: list[Role], preds: list[list[int]], drawn: list[bool], marked: set[int],
          fold: str | None, depth: int) -> None:
    graph, row, lane = view.graph, view.row, view.lane
    n = len(graph.nodes)
    last: dict[int, int] = {}
    nxt = [-1] * n
    ge = graph.dialect == "ge"
    arrow_ends = {i for a in view.arrows for i in a}
    for i in range(n):
        if not drawn[i]:
            continue
        p = last.get(lane[i], -1)
        last[lane[i]] = i
        if p >= 0:
            nxt[p] = i
        low = row[p] + 1 if p >= 0 else 0
        for q in preds[i]:
            if row[q] + 1 > low:
                low = row[q] + 1
        foldable = fold is not None and (roles[i] is Role.OP if not ge else True) and i not in marked \
            and i not in arrow_ends
        if foldable and p >= 0 and view.run[p] >= 0:
            run = view.runs[view.run[p]]
            own = view.run[p]
            if run.key == _fold_key(graph, i, fold, depth) and all(row[q] < run.row or view.run[q] == own
                                                                   for q in preds[i]):
                run.members.append(i)
                view.run[i] = view.run[p]
                row[i] = run.row
                continue
        row[i] = low
        if foldable:
            view.run[i] = len(view.runs)
            view.runs.append(FoldedRun(lane[i], low, [i], _fold_key(graph, i, fold, depth)))
    for i in range(n - 1, -1, -1):  # scope_enter / wait: just above the op they precede
        if drawn[i] and roles[i] in BEFORE and nxt[i] >= 0:
            row[i] = max(row[i], row[nxt[i]] - 1)
    view.rows = max(row, default=-1) + 1
