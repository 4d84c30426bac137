"""The stream plan of an FX graph as a given mode sees it: scopes, streams, records and waits.

Readers already set ``node.stream``, but the verifier re-derives streams from the scope nodes
because the two back-ends read a ``scope_enter`` differently (reference/torchair.md §2):

- max-autotune (GE): ``dict(zip(keys, values))["_user_stream_label"]``, the innermost label wins on
  op attributes, while record/wait bookkeeping files ops under the *outermost* label (R10);
- reduce-overhead (aclgraph): a scope is a stream scope when ``"_user_stream_label" in keys`` and its
  label is ``values[0]`` (R6); nested scopes nest ``with torch.npu.stream(...)`` blocks.

A graph without any ``scope_enter`` keeps the streams its reader gave it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.graph.model import STREAM_LABEL, Graph, Node
from airctl.graph.roles import Role, role_of_op
from airctl.modes import Mode


def emits_ge_op(node: Node, role: Role) -> bool:
    """Whether converting the node creates GE ops (what R7/R8 bookkeeping counts)."""
    return role.is_op and node.op not in ("getitem", "_operator.getitem")


def node_args(node: Node) -> list[Any]:
    args = node.attrs.get("args")
    return list(args) if isinstance(args, (list, tuple)) else []


def ref_name(value: Any) -> str | None:
    """``"%mm"`` -> ``"mm"`` (how readers store node references in ``attrs['args']``)."""
    if isinstance(value, str) and value.startswith("%") and len(value) > 1:
        return value[1:]
    return None


def scope_keys_values(node: Node) -> tuple[Any, Any]:
    """A ``scope_enter``'s keys and values: its first two arguments, else its ``keys``/``values`` keywords."""
    args = node_args(node)
    kwargs = node.attrs.get("kwargs")
    kwargs = kwargs if isinstance(kwargs, dict) else {}
    keys = args[0] if len(args) > 0 else kwargs.get("keys")
    values = args[1] if len(args) > 1 else kwargs.get("values")
    return keys, values


def stream_label(keys: Any, values: Any, mode: Mode) -> str | None:
    """The stream a ``scope_enter`` opens under ``mode``, None for a non-stream scope."""
    if not isinstance(keys, (list, tuple, str)) or not isinstance(values, (list, tuple, str)):
        return None
    if mode.is_aclgraph:
        # aclgraph: `'_user_stream_label' in args[0]` then `args[1][0]` (graph_pass.py)
        if STREAM_LABEL in keys and len(values) > 0:
            return str(values[0])
        return None
    label = dict(zip(keys, values, strict=False)).get(STREAM_LABEL)  # GE: zip, innermost wins per key
    return None if label is None else str(label)


@dataclass
class Scope:
    enter: int  # node index of the scope_enter
    label: str | None  # stream label, None for attribute-only scopes
    exit: int | None = None
    parent_stream: str | None = None  # innermost enclosing stream label at the enter


@dataclass
class FxPlan:
    graph: Graph
    mode: Mode  # the semantics it was built under (Mode.semantics)
    roles: list[Role] = field(default_factory=list)  # graph.roles.role_of per node
    stream: list[str | None] = field(default_factory=list)  # innermost stream per node (None = default)
    outer: list[str | None] = field(default_factory=list)  # outermost stream label (GE record/wait bookkeeping)
    scopes: list[Scope] = field(default_factory=list)
    unmatched_exits: list[int] = field(default_factory=list)
    unclosed: list[Scope] = field(default_factory=list)
    in_unclosed: list[bool] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    ops: set[str] = field(default_factory=set)  # the distinct ops (per-op tests run once per op, not per node)

    @property
    def nodes(self) -> list[Node]:
        return self.graph.nodes


def build_plan(graph: Graph, mode: Mode) -> FxPlan:
    """The plan of ``graph`` under ``mode``'s semantics. Streams change only at scope markers, so the walk
    visits the markers and fills the runs of nodes between them in one slice each."""
    nodes = graph.nodes
    n = len(nodes)
    plan = FxPlan(graph=graph, mode=Mode.parse(mode).semantics)
    plan.index = {node.name: i for i, node in enumerate(nodes)}
    plan.roles = roles = [role_of_op(node.op, node.kind) for node in nodes]
    plan.ops = {node.op for node in nodes}
    markers = [i for i, role in enumerate(roles) if role is _ENTER or role is _EXIT]
    if not markers:
        plan.stream = [node.stream for node in nodes]
        plan.outer = list(plan.stream)
        plan.in_unclosed = [False] * n
        return plan
    stream: list[str | None] = [None] * n
    outer_of: list[str | None] = [None] * n
    stack: list[Scope] = []
    inner: str | None = None
    outer: str | None = None
    start = 0  # nodes start..i take the streams in force before marker i changes them
    for i in markers:
        if inner is not None:
            stream[start:i + 1] = [inner] * (i + 1 - start)
        if outer is not None:
            outer_of[start:i + 1] = [outer] * (i + 1 - start)
        start = i + 1
        if roles[i] is _EXIT:  # the exit belongs to the scope it closes
            if not stack:
                plan.unmatched_exits.append(i)
                continue
            stack.pop().exit = i
        else:
            keys, values = scope_keys_values(nodes[i])
            scope = Scope(enter=i, label=stream_label(keys, values, plan.mode), parent_stream=inner)
            plan.scopes.append(scope)
            stack.append(scope)
        labels = [s.label for s in stack if s.label is not None]
        inner, outer = (labels[-1], labels[0]) if labels else (None, None)
    if inner is not None:
        stream[start:] = [inner] * (n - start)
    if outer is not None:
        outer_of[start:] = [outer] * (n - start)
    plan.stream, plan.outer = stream, outer_of
    plan.unclosed = list(stack)
    first = stack[0].enter if stack else n
    plan.in_unclosed = [False] * first + [True] * (n - first)
    return plan


_ENTER, _EXIT = Role.SCOPE_ENTER, Role.SCOPE_EXIT
