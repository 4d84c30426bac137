"""A node's origin chain through a ledger: task -> GE op -> FX node per stage -> pass -> Dynamo node -> source.

``airctl show --node NAME`` answers "where does this kernel come from?" in one step. A ledger holds a
snapshot of every stage of a graph; stages that changed nothing share one file. The chain follows
one node through them:

- **FX stages** (AOT's graph, each YAML pass ``yaml:*``, each TorchAir pass ``after:*``, ``fx-final``
  and the aclgraph passes after it): between two snapshots that differ, the structural matcher
  (:func:`airctl.diff.match.match_graphs`) pairs the nodes, so a node is followed through renames,
  and the pass of the later stage is the one that created it (no pair before), moved it to another
  stream (its ``stream`` differs), renamed it, or removed it / fused it away (no pair after: the
  nodes the same pass created around it are named).
- **GE ops**: the ops of each GE stage converted from the node at ``fx-final`` (TorchAir's
  ``_fx_tensor_name`` attribute, :meth:`airctl.graph.model.Node.fx_nodes`).
- **Dynamo node** (:mod:`airctl.diff.chain_dynamo`): AOT's node and Dynamo's share the user's
  source line and module; within them, the k-th node of one op is the k-th of the other.
- **Task** (:mod:`airctl.diff.chain_tasks`): a profiled task of the run's ``profile/trace.json``.

NAME may be any stage's FX node, a Dynamo node, a GE op or a profiled task's name.
:func:`graph_chains` makes every node's chain at once (report.html embeds them), through the same
steps and the same indexed snapshots (:mod:`airctl.diff.chain_graphs`): one computation for both.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from airctl.diff.chain_dynamo import aot_nodes_of, dynamo_of
from airctl.diff.chain_graphs import Snapshots
from airctl.ledger.index import StageRef
from airctl.ledger.reader import Ledger


@dataclass
class PassRef:
    """The pass of a stage: a user YAML pass, TorchAir's own FX or GE pass, or a pipeline step."""

    stage: str
    name: str
    by: str  # "user pass", "TorchAir FX pass", "TorchAir GE pass", "AOT autograd", "airctl"
    where: str | None = None  # a user pass: the pass file and line


@dataclass
class StageStep:
    """The node in one FX stage (``name`` None: absent there) and what that stage's pass did to it."""

    stage: str
    index: int
    name: str | None
    stream: str | None = None
    op: str | None = None
    event: str = "same"  # appears, created, moved, renamed, replaced, removed, same
    detail: str | None = None
    by: PassRef | None = None


@dataclass
class Chain:
    """One node's chain in one graph of a run (see the module docstring)."""

    query: str
    found_as: str  # "FX node", "Dynamo node", "GE op", "profiled task"
    graph: str
    node: str  # its name at the stage it was found in
    op: str | None = None
    tasks: list[dict[str, Any]] = field(default_factory=list)
    ge_ops: list[dict[str, Any]] = field(default_factory=list)
    ge_note: str | None = None
    stages: list[StageStep] = field(default_factory=list)
    origin: PassRef | None = None
    origin_note: str | None = None
    changes: list[StageStep] = field(default_factory=list)  # the steps whose event is not "same"
    dynamo: dict[str, Any] | None = None
    source: str | None = None
    module: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def pass_of(stage: StageRef, passes_file: str | None) -> PassRef:
    """Who made a stage: ``yaml:X`` a user pass (file:line), ``after:X`` TorchAir's FX pass X,
    ``ge:after:X`` TorchAir's GE pass X, ``aot-*`` AOT autograd; otherwise airctl's capture point."""
    name = stage.name
    if name.startswith("yaml:"):
        line = stage.entry.yaml_line
        where = f"{passes_file}:{line}" if passes_file and line else passes_file
        return PassRef(name, name[len("yaml:"):], "user pass", where)
    if name.startswith("ge:after:"):
        return PassRef(name, name[len("ge:after:"):], "TorchAir GE pass")
    if name.startswith("after:"):
        return PassRef(name, name[len("after:"):], "TorchAir FX pass")
    if name.startswith("aot-"):
        return PassRef(name, name, "AOT autograd")
    return PassRef(name, name, "airctl")


def fx_stages(led: Ledger, graph_id: str) -> tuple[StageRef | None, list[StageRef], list[StageRef]]:
    """The graph's Dynamo stage, its other FX stages in order, and its GE stages."""
    stages = led.stages(graph_id)
    dynamo = next((s for s in stages if s.name == "dynamo"), None)
    fx = [s for s in stages if s.dialect == "fx" and s.name != "dynamo" and not s.name.startswith("failed:")]
    return dynamo, fx, [s for s in stages if s.dialect == "ge"]


def _trace(graphs: Snapshots, fx: list[StageRef], at: int, name: str, passes_file: str | None) -> list[StageStep]:
    """The node ``name`` of stage ``fx[at]`` followed backwards and forwards through every FX stage."""
    files, loaded = graphs.stage_list(fx)
    names: list[str | None] = [None] * len(fx)
    names[at] = name
    for k in range(at, 0, -1):  # backwards: the pair in the stage before
        if names[k] is not None:
            names[k - 1] = names[k] if files[k - 1] == files[k] else graphs.b_to_a(fx[k - 1], fx[k]).get(names[k])
    for k in range(at, len(fx) - 1):
        if names[k] is not None:
            names[k + 1] = names[k] if files[k] == files[k + 1] else graphs.a_to_b(fx[k], fx[k + 1]).get(names[k])
    steps: list[StageStep] = []
    before: StageStep | None = None
    for k, stage in enumerate(fx):
        node = loaded[k].get(names[k]) if names[k] else None
        step = StageStep(stage.name, stage.index, names[k], node.stream if node else None, node.op if node else None)
        if k == 0:
            step.event = "appears" if node else "same"
        elif before is not None and files[k - 1] != files[k] and (before.name is not None or step.name is not None):
            _event(step, before, graphs, fx[k - 1], stage, passes_file)
        steps.append(step)
        before = step
    return steps


def _event(step: StageStep, before: StageStep, graphs: Snapshots, prev: StageRef, stage: StageRef,
           passes_file: str | None) -> None:
    if before.name is None:
        step.event, step.detail = "created", None
    elif step.name is None:
        made = graphs.made_beside(prev, stage, before.name)
        step.event, step.detail = "removed", f"fused into or replaced by {', '.join(made)}" if made else "removed"
    elif before.stream != step.stream:
        step.event, step.detail = "moved", f"{before.stream or 'default'} -> {step.stream or 'default'}"
    elif before.op != step.op:
        step.event, step.detail = "replaced", f"{before.op} -> {step.op}"
    elif before.name != step.name:
        step.event, step.detail = "renamed", f"{before.name} -> {step.name}"
    else:
        return
    step.by = graphs.memo(("pass", stage.name), lambda: pass_of(stage, passes_file))


def _ge_ops(graphs: Snapshots, ge: list[StageRef], fx_name: str) -> list[dict[str, Any]]:
    """Per distinct GE snapshot: the ops converted from FX node ``fx_name``."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for stage in ge:
        if stage.file in seen:
            continue
        seen.add(stage.file)
        out.extend({"stage": stage.name, "name": op.name, "op": op.op, "stream": op.stream}
                   for op in graphs.ge_by_fx(stage).get(fx_name, ()))
    return out


def _ge_owner(graphs: Snapshots, ge: list[StageRef], op_name: str) -> tuple[str | None, bool]:
    """The FX node GE op ``op_name`` was converted from (None when it names none), and whether the op exists."""
    for stage in ge:
        op = graphs(stage).get(op_name)
        if op is not None:
            return next(iter(op.fx_nodes()), None), True
    return None, False


def chains(led: Ledger, query: str, tasks: dict[str, Any] | None = None) -> list[Chain]:
    """Every graph's chain for ``query`` (an FX node, Dynamo node, GE op or profiled task name);
    ``tasks``: :func:`airctl.diff.chain_tasks.tasks_of` of the run's profile, when it has one."""
    from airctl.diff.chain_tasks import task_rows

    graphs = Snapshots(led)
    passes_file = led.index.passes
    found: list[Chain] = []
    task_hit = task_rows(tasks, query, by_task=True)
    for gid in led.graph_ids():
        dynamo, fx, ge = fx_stages(led, gid)
        if not fx:
            continue
        name, found_as = query, "FX node"
        if task_hit:
            name, found_as = str(task_hit[0].get("node") or query), "profiled task"
        at = next((k for k in range(len(fx) - 1, -1, -1) if graphs(fx[k]).get(name) is not None), None)
        if at is None:
            owner, is_op = _ge_owner(graphs, ge, name)
            if is_op:
                if owner is None:
                    found.append(Chain(query, "GE op", gid, name, ge_note="the GE op names no FX node "
                                       "(TorchAir added it in conversion: a Const, Identity or cast)"))
                    continue
                name, found_as = owner, "GE op" if found_as == "FX node" else found_as
                at = next((k for k in range(len(fx) - 1, -1, -1) if graphs(fx[k]).get(name) is not None), None)
        if at is None and dynamo is not None and graphs(dynamo).get(query) is not None:
            aot = aot_nodes_of(graphs(dynamo), graphs(fx[0]), query)
            if aot:
                name, found_as, at = aot[0], "Dynamo node", 0
        if at is None:
            continue
        found.append(_chain(graphs, led, gid, query, found_as, name, at, (dynamo, fx, ge), passes_file, tasks))
    return found


def graph_chains(led: Ledger, gid: str, tasks: dict[str, Any] | None = None,
                 graphs: Snapshots | None = None) -> tuple[list[StageRef], list[Chain]]:
    """Every node's chain in graph ``gid`` (report.html's provenance): one per lineage, a node followed
    from the FX stage where it first appears to its last; the same chain ``show --node`` prints for
    any of its names. Also the graph's FX stages, which the chains' steps index. ``graphs``: the
    ledger's snapshots as the caller loaded and matched them (the report's)."""
    graphs = graphs or Snapshots(led)
    dynamo, fx, ge = fx_stages(led, gid)
    out: list[Chain] = []
    for k, stage in enumerate(fx):
        if k and fx[k - 1].file == stage.file:
            continue
        before = graphs.b_to_a(fx[k - 1], stage) if k else {}
        for node in graphs(stage).nodes:
            if node.name not in before:
                out.append(_chain(graphs, led, gid, node.name, "FX node", node.name, k, (dynamo, fx, ge),
                                  led.index.passes, tasks))
    return fx, out


def _chain(graphs: Snapshots, led: Ledger, gid: str, query: str, found_as: str, name: str, at: int,
           stages: tuple[StageRef | None, list[StageRef], list[StageRef]], passes_file: str | None,
           tasks: dict[str, Any] | None) -> Chain:
    from airctl.diff.chain_tasks import task_rows

    dynamo, fx, ge = stages
    steps = _trace(graphs, fx, at, name, passes_file)
    node = graphs(fx[at]).get(name)
    chain = Chain(query, found_as, gid, name, op=node.op if node else None, stages=steps)
    chain.changes = [s for s in steps if s.event not in ("same", "appears")]
    first = next((s for s in steps if s.name is not None), None)
    if first is not None and first.event == "created":
        chain.origin = first.by
    elif first is not None:
        chain.origin = graphs.memo(("pass", fx[0].name), lambda: pass_of(fx[0], passes_file))
    final = next((s for s in reversed(steps) if s.stage == "fx-final"), steps[-1])
    if ge and final.name:
        chain.ge_ops = _ge_ops(graphs, ge, final.name)
        if not chain.ge_ops:
            chain.ge_note = ("no GE op: a stream op becomes a control edge and stream attributes in GE"
                             if node is not None and node.op.startswith(("air.", "npugraph_ex."))
                             else "no GE op names it: fused, folded or not converted by TorchAir")
    elif ge:
        chain.ge_note = "no GE op: the node is gone before fx-final"
    first_node = graphs(fx[steps.index(first)]).get(first.name) if first and first.name else None
    src_node = first_node or node
    chain.source, chain.module = (src_node.source, src_node.module) if src_node else (None, None)
    if chain.origin is not None and chain.origin.by == "user pass" and not chain.source and chain.origin.where:
        chain.source, chain.origin_note = chain.origin.where, "the node is the pass's: its line in the pass file"
    elif chain.origin is not None and chain.origin.by.startswith("TorchAir") and not chain.source:
        chain.origin_note = "TorchAir's pass made it: no user source line"
    if dynamo is not None and first is not None and first.event == "appears" and first_node is not None:
        chain.dynamo = dynamo_of(graphs(dynamo), graphs(fx[0]), first_node.name,
                                 (graphs.lines(dynamo), graphs.lines(fx[0])))
    if tasks:
        names = {s.name for s in steps if s.name} | {g["name"] for g in chain.ge_ops}
        chain.tasks = [t for n in sorted(names) for t in task_rows(tasks, n, by_task=False)]
    return chain
