"""Waits a later pass of the run may move (rule ``wait_moved_by_compiler``, R18, over a run's stages).

A stream wait (``air.wait``, ``npugraph_ex.wait``, a tagged event wait) returns nothing, so node order
is all that keeps a write after it. Functionalization writes a mutated graph input as its new value
(computed by the op that mutates it, e.g. an ``auto_functionalized`` custom op such as a serving
stack's KV-cache write) plus a ``copy_`` into the input at the end. A wait placed between the two
guards the ``copy_``, and the passes that fold the value and its ``copy_`` into one op writing in
place, at the value's producer, put the write before the wait: the public report's "torch.compile
moved a stream wait after the in-place add it guarded, because the wait had no data dependency".

The passes that fold, as the torch-npu 2.13.0 wheel runs them (each is a ledger stage
``after:<pass>``, so the run says which ran after the wait entered the graph):

- ``recover_view_inplace_pattern`` (every mode, TorchAir's FX passes after the pre hook): the NPU
  scatter ops (``npu.scatter_update``, ``npu_scatter_nd_update``, ``npu_quant_scatter``);
- ``reinplace_input_mutated_ops`` (reduce-overhead, npugraph_ex; after ``fx-final``):
  ``auto_functionalized`` custom ops and the NPU functional ops registered as in-placeable.

Fires when, in the checked stage (``fx-final``), a wait sits between such a producer of a mutated
input and its ``copy_`` on the wait's stream, the awaited stream reads or writes that input before its
record, and one of those passes ran after the stage the wait entered. The finding says which pass
could move the write and whether it did in this run: the graph that runs (the graph's last FX stage)
still has the ``copy_`` after the wait, or not. :mod:`airctl.verify.moved_waits` reports a move
visible in one graph (source lines); this module needs a run's stages (:mod:`airctl.verify.run_checks`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from airctl.graph.model import Graph, Node
from airctl.graph.roles import Role
from airctl.ledger.index import GraphEntry, StageRef
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.happens_before import is_inplace
from airctl.verify.moved_waits import awaited_ops
from airctl.verify.plan import FxPlan, build_plan
from airctl.verify.rules import make_finding

COPY = "aten.copy_.default"
SCATTERS = frozenset({"npu.scatter_update.default", "npu.npu_scatter_nd_update.default",
                      "npu.npu_quant_scatter.default"})
INPLACEABLE_NPU = frozenset({"npu.npu_kv_rmsnorm_rope_cache_v2_functional.default",
                             "npu.npu_mla_prolog_v3_functional.default", "npu.npu_add_rms_norm_v2_functional.default"})


def _auto_functionalized(op: str) -> bool:
    return op.rpartition(".")[2] in ("auto_functionalized", "auto_functionalized_v2")


# pass (ledger stage ``after:<pass>``) -> which producers of a mutated input it folds with their copy_
FOLDS: dict[str, Callable[[str], bool]] = {
    "recover_view_inplace_pattern": SCATTERS.__contains__,
    "reinplace_input_mutated_ops": lambda op: _auto_functionalized(op) or op in INPLACEABLE_NPU,
}


def movable_wait_findings(entry: GraphEntry, checked: StageRef, graph: Graph, mode: Mode,
                          load: Callable[[StageRef], Graph]) -> list[Finding]:
    """R18's findings for one graph of a run: ``graph`` is its checked stage ``checked``."""
    if not any(n.op == COPY for n in graph.nodes):
        return []
    mode = Mode.parse(mode).semantics
    plan = build_plan(graph, mode)
    suspects = _guarded_writes(plan)
    if not suspects:
        return []
    names = [s.name for s in entry.stages]
    runs = next((s for s in reversed(entry.stages) if s.dialect == "fx"), checked.entry)
    final = load(StageRef(graph_id=entry.id, entry=runs)) if runs is not checked.entry else graph
    found = []
    for w, c, p in suspects:
        wait, copy, producer = plan.nodes[w], plan.nodes[c], plan.nodes[p]
        start = _entered(entry, wait.name)
        movers = [n.removeprefix("after:") for n in names[start:]
                  if n.startswith("after:") and FOLDS.get(n.removeprefix("after:"), _never)(producer.op)]
        if not movers:
            continue
        target, what = copy.inputs[0], _what(producer)
        moved = _moved(final, wait.name, target)
        verdict = (f"in this run it moved: {runs.name} (the graph that runs) has no copy_ into {target} after "
                   f"{wait.name}" if moved else
                   f"in this run it did not move: {runs.name} (the graph that runs) still writes {target} after "
                   f"{wait.name}")
        message = (f"{wait.name} guards {copy.name}, the write of {target} that {what} computes, but has no "
                   f"data dependency on it: only node order keeps the write after the wait, and "
                   f"{' and '.join(dict.fromkeys(movers))} (run after the wait entered the graph) folds "
                   f"{producer.name} and its copy_ into one op writing {target} in place at {producer.name}, before "
                   f"the wait, where its own conditions hold; {verdict}")
        f = make_finding("wait_moved_by_compiler", mode, message, [wait.name, copy.name, producer.name], graph,
                         hint=_hint(producer))
        if f is not None:
            f.graph = entry.id
            found.append(f)
    return found


def _what(node: Node) -> str:
    """``auto_functionalized_v2 (airctl_fixture.write_cache)``: the custom op an auto_functionalized wraps."""
    args = node.attrs.get("args") or []
    wrapped = re.search(r"op='([\w.]+)'", str(args[0])) if args and _auto_functionalized(node.op) else None
    return f"{node.name} ({wrapped.group(1)})" if wrapped else node.name


def _never(_op: str) -> bool:
    return False


def _guarded_writes(plan: FxPlan) -> list[tuple[int, int, int]]:
    """(wait, copy_, producer) index triples: a wait between a mutated input's producer and its copy_."""
    nodes, roles, streams = plan.nodes, plan.roles, plan.stream
    waits = [i for i, r in enumerate(roles) if r in (Role.WAIT, Role.TAGGED_WAIT)]
    if not waits:
        return []
    out = []
    touched: dict[int, set[str]] = {}  # per wait, built once
    for c, node in enumerate(nodes):
        if node.op != COPY or len(node.inputs) < 2:
            continue
        dst = plan.graph.get(node.inputs[0])
        if dst is None or dst.kind not in ("placeholder", "get_attr"):
            continue
        p = _producer(plan, node.inputs[1])
        if p is None:
            continue
        for w in waits:
            if p < w < c and streams[w] == streams[c]:
                if w not in touched:  # what the awaited streams read or write before their records
                    touched[w] = {x for j in awaited_ops(plan, w) for x in nodes[j].inputs}
                if dst.name in touched[w]:
                    out.append((w, c, p))
    return out


def _producer(plan: FxPlan, value: str) -> int | None:
    """The node that computes ``value`` (through a ``getitem`` of a multi-output op)."""
    i = plan.index.get(value)
    if i is None:
        return None
    node = plan.nodes[i]
    if node.op in ("getitem", "_operator.getitem") and node.inputs:
        i = plan.index.get(node.inputs[0], i)
    return i


def _entered(entry: GraphEntry, name: str) -> int:
    """The position of the stage whose pass inserted node ``name`` (0: there from the start)."""
    return next((i for i, s in enumerate(entry.stages) if name in (s.inserted or [])), 0)


def _moved(final: Graph, wait: str, target: str) -> bool:
    """The graph that runs writes ``target`` after the wait no more (or has no such wait)."""
    nodes: list[Node] = final.nodes
    at = next((i for i, n in enumerate(nodes) if n.name == wait), None)
    if at is None:
        return True
    return not any(n.inputs[:1] == [target] and (n.op == COPY or is_inplace(n.op)) for n in nodes[at + 1:])


def _hint(producer: Node) -> str:
    where = producer.source.rsplit("/", 1)[-1] if producer.source else None
    select = f'{{source: "{where}"}}' if where else f"{{target: {producer.op}}}"
    return (f"put the wait before {producer.name}{f' ({where})' if where else ''}, the op that computes the new "
            f"value, so wherever a pass folds the write it lands after the wait (max-autotune: or thread the "
            f"tensor, `torchair.ops.npu_wait_tensor`) — in the pass file:\n"
            f"  - name: write-waits\n    kind: wait\n    before: {select}\n    on: <the record pass>")
