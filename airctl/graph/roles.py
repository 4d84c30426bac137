"""What each node of an FX graph does for the stream plan: one classifier for verifier and executor.

The verifier (:mod:`airctl.verify.plan`) and the multi-stream executor
(:mod:`airctl.execute.schedule`) both ask of every node "is it a scope marker, a record, a wait,
a tagged closure event, an input, the output, or work?". Two answers would drift apart;
:func:`role_of` is the single one. Data only, over :class:`~airctl.graph.model.Node`
(no torch): the air ops are recognised by name (``air.<name>.<overload>``, reference/torchair.md §2,
and npugraph_ex's copies ``npugraph_ex.<name>.<overload>``).

Roles a backend runs as an op (``Role.is_op``): plain ops, ``air.wait_tensor``, TorchAir's tagged
closure events and stream tags. The executor gives some of them special meanings (a tagged wait
waits, a stream tag does nothing); the verifier counts them all as ops (GE converts them, R7/R8).

>>> role_of(Node("x", "placeholder", kind="placeholder")), role_of(Node("r", "air.record.default"))
(<Role.INPUT: 'input'>, <Role.RECORD: 'record'>)
>>> role_of(Node("e", "air.tagged_event_wait.default", kind="call_function")).is_op
True

Collectives are ops (``Role.OP``) that also have a *kind* (:func:`collective_kind`): the same word
for the FX target a script's ``torch.distributed`` call becomes and for the GE op TorchAir
converts it to, so dumps, selectors, the executor's collective log and the rank comparison agree.

>>> collective_kind("_c10d_functional.all_reduce.default"), collective_kind("HcomAllReduce")
('all_reduce', 'all_reduce')
>>> collective_kind("_c10d_functional.wait_tensor.default"), collective_kind("aten.mm.default")
(None, None)
"""

from __future__ import annotations

import enum
from functools import lru_cache

from airctl.graph.model import STREAM_NAMESPACES, Node

INPUT_KINDS = ("placeholder", "get_attr")
OP_KINDS = ("call_function", "call_method", "call_module", "op")


class Role(str, enum.Enum):
    INPUT = "input"  # placeholder / get_attr: a graph input or parameter
    OUTPUT = "output"
    SCOPE_ENTER = "scope_enter"  # air.scope_enter(keys, values)
    SCOPE_EXIT = "scope_exit"
    RECORD = "record"  # air.record(): a token waits name
    WAIT = "wait"  # air.wait([records...])
    WAIT_TENSOR = "wait_tensor"  # air.wait_tensor(x, dep)
    TAGGED_RECORD = "tagged_record"  # air.tagged_event_record[_on_stream](tag): TorchAir's closure events
    TAGGED_WAIT = "tagged_wait"  # air.tagged_event_wait[_on_stream](tag)
    STREAM_TAG = "stream_tag"  # air.record_tagged_stream[_], air.tagged_stream_wait_stream
    OP = "op"  # any other call: the work
    OTHER = "other"  # a node of no kind above (not an op, input or output)

    def __str__(self) -> str:
        return self.value

    @property
    def is_op(self) -> bool:
        """Whether a backend runs the node as an op (not scope, record/wait, input or output)."""
        return self in _OPS


_OPS = frozenset({Role.OP, Role.WAIT_TENSOR, Role.TAGGED_RECORD, Role.TAGGED_WAIT, Role.STREAM_TAG})

_AIR_ROLES = {
    "scope_enter": Role.SCOPE_ENTER,
    "scope_exit": Role.SCOPE_EXIT,
    "record": Role.RECORD,
    "wait": Role.WAIT,
    "wait_tensor": Role.WAIT_TENSOR,
    "tagged_event_record": Role.TAGGED_RECORD,
    "tagged_event_record_on_stream": Role.TAGGED_RECORD,
    "tagged_event_wait": Role.TAGGED_WAIT,
    "tagged_event_wait_on_stream": Role.TAGGED_WAIT,
    "record_tagged_stream": Role.STREAM_TAG,
    "record_tagged_stream_": Role.STREAM_TAG,
    "tagged_stream_wait_stream": Role.STREAM_TAG,
}


def air_name(op: str) -> str | None:
    """``air.scope_enter.default`` -> ``scope_enter`` (npugraph_ex's ``npugraph_ex.*`` copies too);
    None for other ops.

    >>> air_name("air.wait.default"), air_name("npugraph_ex.scope_enter.default"), air_name("aten.mm.default")
    ('wait', 'scope_enter', None)
    """
    parts = op.split(".")
    if parts[0] not in STREAM_NAMESPACES:
        return None
    return parts[1] if len(parts) > 1 else None


def role_of(node: Node) -> Role:
    """The node's :class:`Role`, from its op (air ops by name) and its FX kind."""
    return role_of_op(node.op, node.kind)


@lru_cache(maxsize=4096)
def role_of_op(op: str, kind: str) -> Role:
    """:func:`role_of` by the two fields it reads; cached, as a graph has few distinct (op, kind) pairs."""
    air = air_name(op)
    if air in ("scope_enter", "scope_exit", "record", "wait"):
        return _AIR_ROLES[air]
    if kind in INPUT_KINDS or op in INPUT_KINDS:
        return Role.INPUT
    if kind == "output" or op == "output":
        return Role.OUTPUT
    if kind in OP_KINDS:
        return _AIR_ROLES.get(air, Role.OP) if air is not None else Role.OP
    return Role.OTHER


# -- collectives --------------------------------------------------------------------------------
COLLECTIVE_KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send", "recv")

# FX op name (namespace.op, any overload) -> kind: torch's functional collectives (and their
# pre-2.3 namespace), TorchAir's own npu_define ops (docs/multi-rank.md has the table)
_FX_COLLECTIVES = {
    "all_reduce": "all_reduce", "all_reduce_": "all_reduce", "all_reduce_coalesced": "all_reduce",
    "all_reduce_coalesced_": "all_reduce", "all_gather_into_tensor": "all_gather",
    "all_gather_into_tensor_out": "all_gather", "all_gather_into_tensor_coalesced": "all_gather",
    "reduce_scatter_tensor": "reduce_scatter", "reduce_scatter_tensor_coalesced": "reduce_scatter",
    "all_to_all_single": "all_to_all", "broadcast": "broadcast", "broadcast_": "broadcast",
}
_NPU_DEFINE = {
    "allgather_in_tensor": "all_gather", "_allgather_in_tensor_shape": "all_gather",
    "allgather_in_tensor_uneven": "all_gather", "all_to_all_single_npu": "all_to_all",
    "reduce_scatter_tensor_uneven": "reduce_scatter", "broadcast": "broadcast", "_send": "send", "_recv": "recv",
}
_GE_COLLECTIVES = {
    "HcomAllReduce": "all_reduce", "HcomAllGather": "all_gather", "HcomAllGatherV": "all_gather",
    "HcomReduceScatter": "reduce_scatter", "HcomReduceScatterV": "reduce_scatter", "HcomAllToAll": "all_to_all",
    "HcomAllToAllV": "all_to_all", "HcomAllToAllVC": "all_to_all", "HcomBroadcast": "broadcast",
    "HcomSend": "send", "HcomReceive": "recv",
}
COLLECTIVE_WAIT = "_c10d_functional.wait_tensor"  # blocks until the collective it is given completed


def collective_kind(op: str) -> str | None:
    """The collective an op issues (one of :data:`COLLECTIVE_KINDS`), or None for any other op."""
    if op in _GE_COLLECTIVES:
        return _GE_COLLECTIVES[op]
    parts = op.removeprefix("torch.ops.").split(".")
    if len(parts) < 2:
        return None
    if parts[0] in ("_c10d_functional", "c10d_functional"):
        return _FX_COLLECTIVES.get(parts[1])
    if parts[0] == "npu_define":
        return _NPU_DEFINE.get(parts[1])
    return None


def is_collective_wait(op: str) -> bool:
    """``_c10d_functional.wait_tensor`` (any overload): the op that waits for a collective."""
    return op.removeprefix("torch.ops.").startswith(COLLECTIVE_WAIT + ".") or op == COLLECTIVE_WAIT
