"""Checks on GE graphs read from TorchAir dumps (max-autotune only).

In a GE graph the stream plan is already lowered: streams are ``_user_stream_label`` attributes
and record/wait pairs are control edges (``^Abs`` / ``Abs:-1``), so what can still be seen is
where those edges landed and whether side-stream work reaches ``NetOutput`` (reference §2.1).
GE synchronises data edges itself, so a cross-stream data edge is not a race here.
"""

from __future__ import annotations

from airctl.graph.model import Graph, Node
from airctl.modes import Mode
from airctl.verify.cycles import deadlock_findings, ge_predecessors, successors
from airctl.verify.findings import Finding
from airctl.verify.rules import make_finding
from airctl.verify.scope_values import ge_scope_findings

CONST_TYPES = frozenset({"Const", "Constant"})
OUTPUT_TYPES = frozenset({"NetOutput"})
INPUT_TYPES = frozenset({"Data", "RefData", "Variable"})


def check_ge(graph: Graph) -> list[Finding]:
    mode = Mode.MAX_AUTOTUNE
    findings: list[Finding] = []

    def add(f: Finding | None) -> None:
        if f is not None:
            findings.append(f)

    readers: dict[str, list[Node]] = {}
    for node in graph.nodes:
        for ref in node.inputs:
            if ref:
                readers.setdefault(Node.producer(ref), []).append(node)
    for node in graph.nodes:
        for ref in node.control_inputs:
            src = Node.producer(ref)
            if src not in graph:
                add(make_finding("wait_on_unknown_record", mode,
                                 f"{node.name} has a control input from {src!r}, which is not in the graph (R9)",
                                 [node.name], graph))
        if node.op in CONST_TYPES and node.control_inputs and not _ordered_by_data(graph, node, readers):
            srcs = ", ".join(Node.producer(r) for r in node.control_inputs)
            add(make_finding("wait_on_const", mode,
                             f"the control edge from {srcs} lands on the helper {node.name} ({node.op}) instead of a "
                             f"compute op; GE may fold the Const and lose the ordering (R8)",
                             [node.name, *(Node.producer(r) for r in node.control_inputs)], graph))
    findings.extend(ge_scope_findings(graph, mode))
    preds = ge_predecessors(graph)
    if any(j >= i for i, ps in enumerate(preds) for j in ps):  # else every edge points forward: no cycle
        findings.extend(deadlock_findings(graph, successors(preds), mode))
    findings.extend(_unjoined(graph, preds, mode))
    return findings


def _ordered_by_data(graph: Graph, const: Node, readers: dict[str, list[Node]]) -> bool:
    """Whether every op reading ``const`` also reads a value made on the stream of each op whose control edge
    landed on it: GE synchronises that cross-stream data edge itself, so the lost control edge loses nothing
    (the FX verdict on the same plan, :meth:`airctl.verify.fx_checks.FxStructure._data_edge_orders`: a wait
    before ``add(abs, 1)`` is no R8 alarm in the FX graph, the DEBUG log or the GE dump)."""
    users = readers.get(const.name) or []
    if not users:
        return False
    sources = [graph.get(Node.producer(r)) for r in const.control_inputs]
    if any(s is None for s in sources):
        return False
    for user in users:
        made_on = {graph.get(Node.producer(r)).stream for r in user.inputs  # type: ignore[union-attr]
                   if r and Node.producer(r) != const.name and graph.get(Node.producer(r)) is not None}
        if any(s.stream not in made_on for s in sources):  # type: ignore[union-attr]
            return False
    return True


def _unjoined(graph: Graph, preds: list[list[int]], mode: Mode) -> list[Finding]:
    nodes = graph.nodes
    queue = [i for i, n in enumerate(nodes) if n.op in OUTPUT_TYPES]
    if not queue:
        return []
    outputs = [nodes[i] for i in queue]
    reached = [False] * len(nodes)  # by position (GE op names are unique in a graph)
    for i in queue:
        reached[i] = True
    while queue:
        for j in preds[queue.pop()]:
            if not reached[j]:
                reached[j] = True
                queue.append(j)
    skip = CONST_TYPES | INPUT_TYPES
    by_stream: dict[str, list[str]] = {}
    for i, n in enumerate(nodes):
        if n.stream is not None and not reached[i] and n.op not in skip:
            by_stream.setdefault(n.stream, []).append(n.name)
    out = []
    for stream, names in by_stream.items():
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        f = make_finding("stream_not_joined", mode,
                         f"{shown} on stream {stream!r} reach{'es' if len(names) == 1 else ''} no "
                         f"{outputs[0].name}: no data or control path orders {'it' if len(names) == 1 else 'them'} "
                         f"before the graph output", [*names[:20], outputs[0].name], graph)
        if f is not None:
            out.append(f)
    return out
