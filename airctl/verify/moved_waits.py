"""Waits the compiler moved (rule ``wait_moved_by_compiler``, R18).

A stream wait (``torchair.ops.wait``, ``event.wait()``) returns nothing the guarded op reads, so the
only thing that keeps it before that op is node order, and the passes between the user's code and
the graph that runs reorder nodes that have no data dependency: AOT's functionalization and
partitioner, TorchAir's and npugraph_ex's reinplace passes. The public report: torch.compile moved a
stream wait after the in-place add it guarded, because the wait had no data dependency on it; the fix
threads the tensor through the wait (``npu_wait_tensor`` semantics: the op reads the wait's output).
``check`` then reports the race, never the reorder that caused it; this rule names it.

It fires when the graph that runs has an op that (a) is written after the wait in the same source
file (its source line is later), (b) runs before the wait on the wait's stream, and (c) touches what
the awaited stream produced, read or wrote before its record: the wait was meant to guard it and
no longer does. Where the move happened is the stage the finding first appears at (``airctl show
-v``; a run's findings carry it).

Cost: one pass to find waits whose stream runs a later-written op before them (rare); the guarded
sets are built only for those.
"""

from __future__ import annotations

from airctl.graph.model import Node, is_stream_op, split_source
from airctl.graph.roles import Role
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.happens_before import is_inplace
from airctl.verify.plan import FxPlan, node_args, ref_name
from airctl.verify.rules import make_finding

REORDERING_PASSES = {
    Mode.MAX_AUTOTUNE: "AOT's functionalization and partitioner",
    Mode.REDUCE_OVERHEAD: "AOT's functionalization and partitioner, or the aclgraph reinplace passes "
                          "(reinplace_inplaceable_ops_pass, reinplace_input_mutated_ops)",
}


def _line(source: str | None) -> tuple[str, int] | None:
    file, line = split_source(source)
    return (file, line) if file and line is not None else None


def awaited_records(plan: FxPlan, wait: Node, role: Role) -> list[int]:
    """Node indices of the records ``wait`` waits on."""
    if role is Role.WAIT:
        args = node_args(wait)
        refs = args[0] if args and isinstance(args[0], list) else wait.inputs
        names = [ref_name(r) or r for r in refs if isinstance(r, str)]
        return [plan.index[n] for n in names if n in plan.index]
    tag = next(iter(node_args(wait)), None)
    return [i for i, n in enumerate(plan.nodes)
            if plan.roles[i] is Role.TAGGED_RECORD and next(iter(node_args(n)), None) == tag and n.source]


def awaited_ops(plan: FxPlan, w: int) -> list[int]:
    """Node indices of the ops the streams ``plan.nodes[w]`` waits on run before their records (record by record)."""
    found: list[int] = []
    for r in awaited_records(plan, plan.nodes[w], plan.roles[w]):
        other = plan.stream[r]
        if other != plan.stream[w]:
            found.extend(j for j in range(r) if plan.stream[j] == other and plan.roles[j].is_op)
    return found


def moved_wait_findings(plan: FxPlan) -> list[Finding]:
    nodes, roles, streams = plan.nodes, plan.roles, plan.stream
    if not any(is_stream_op(op, "wait") or is_stream_op(op, "tagged_event_wait") for op in plan.ops):
        return []
    latest: dict[tuple[str | None, str], int] = {}  # (stream, file) -> the latest source line run so far
    suspects: list[int] = []
    lines: dict[str, tuple[str, int] | None] = {}  # source -> (file, line): a source repeats across nodes
    for i, node in enumerate(nodes):
        src = node.source
        if src is None:
            continue
        where = lines[src] if src in lines else lines.setdefault(src, _line(src))
        if roles[i] in (Role.WAIT, Role.TAGGED_WAIT) and where is not None:
            if latest.get((streams[i], where[0]), -1) > where[1]:
                suspects.append(i)
        elif roles[i].is_op and where is not None:
            key = (streams[i], where[0])
            latest[key] = max(latest.get(key, -1), where[1])
    findings: list[Finding] = []
    for w in suspects:
        findings.extend(_check_wait(plan, w))
    return findings


def _check_wait(plan: FxPlan, w: int) -> list[Finding]:
    nodes, streams = plan.nodes, plan.stream
    wait = nodes[w]
    file, line = _line(wait.source) or ("", 0)
    produced: set[str] = set()
    accessed: set[str] = set()
    written: set[str] = set()
    last_op: str | None = None  # the awaited stream's last op before its record: where the hint's record goes
    for j in awaited_ops(plan, w):
        produced.add(nodes[j].name)
        accessed.update(nodes[j].inputs)
        if is_inplace(nodes[j].op) and nodes[j].inputs:
            written.add(nodes[j].inputs[0])
        last_op = nodes[j].name
    if not produced:
        return []
    found = []
    for x in range(w):
        node = nodes[x]
        where = _line(node.source)
        if streams[x] != streams[w] or not plan.roles[x].is_op or where is None or where[0] != file or where[1] <= line:
            continue
        touches = (not produced.isdisjoint(node.inputs) or not written.isdisjoint(node.inputs)
                   or (is_inplace(node.op) and bool(node.inputs) and node.inputs[0] in accessed))
        if not touches:
            continue
        producer = next((n for n in node.inputs if n in produced), last_op)
        passes = REORDERING_PASSES[plan.mode]
        f = make_finding("wait_moved_by_compiler", plan.mode,
                         f"{node.name} (line {where[1]}) is written after {wait.name} (line {line}) and touches "
                         f"what the awaited stream works on, but runs before it: the wait has no data "
                         f"dependency on {node.name}, so a pass that reorders ({passes}) moved one past the "
                         f"other; the stage where this first appears names the pass",
                         [wait.name, node.name], plan.graph, hint=_hint(plan, producer, node.name))
        if f is not None:
            f.source = node.source
            found.append(f)
    return found


def _hint(plan: FxPlan, producer: str | None, guarded: str) -> str | None:
    """Max-autotune: the rule's Python (npu_wait_tensor); aclgraph modes: a pass file's record/wait
    pair, which airctl inserts after AOT, right before the guarded op (no later pass reorders it)."""
    if plan.mode.is_ge or producer is None:
        return None
    from airctl.passes.fix import wait_hint

    return ("thread the wait to the op it guards: npu_wait_tensor is max-autotune only, so let a pass file "
            "insert the record/wait right before it — " + wait_hint(plan.graph, producer, guarded))
