"""What each node of an FX graph does for the stream plan: one classifier for verifier and executor.

The verifier (:mod:`airctl.verify.plan`) and the multi-stream executor
(:mod:`airctl.execute.schedule`) both ask of every node "is it a scope marker, a record, a wait,
a tagged closure event, an input, the output, or work?". They used to answer separately and
drifted; :func:`role_of` is the single answer. Data only, over :class:`~airctl.graph.model.Node`
(no torch): the air ops are recognised by name (``air.<name>.<overload>``, reference/torchair.md §2).

Roles a backend runs as an op (``Role.is_op``): plain ops, ``air.wait_tensor``, TorchAir's tagged
closure events and stream tags. The executor gives some of them special meanings (a tagged wait
waits, a stream tag does nothing); the verifier counts them all as ops (GE converts them, R7/R8).

>>> role_of(Node("x", "placeholder", kind="placeholder")), role_of(Node("r", "air.record.default"))
(<Role.INPUT: 'input'>, <Role.RECORD: 'record'>)
>>> role_of(Node("e", "air.tagged_event_wait.default", kind="call_function")).is_op
True
"""

from __future__ import annotations

import enum

from airctl.graph.model import Node

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
    """``air.scope_enter.default`` -> ``scope_enter``; None for non-air ops.

    >>> air_name("air.wait.default"), air_name("aten.mm.default")
    ('wait', None)
    """
    if not op.startswith("air."):
        return None
    parts = op.split(".")
    return parts[1] if len(parts) > 1 else None


def role_of(node: Node) -> Role:
    """The node's :class:`Role`, from its op (air ops by name) and its FX kind."""
    air = air_name(node.op)
    if air in ("scope_enter", "scope_exit", "record", "wait"):
        return _AIR_ROLES[air]
    if node.kind in INPUT_KINDS or node.op in INPUT_KINDS:
        return Role.INPUT
    if node.kind == "output" or node.op == "output":
        return Role.OUTPUT
    if node.kind in OP_KINDS:
        return _AIR_ROLES.get(air, Role.OP) if air is not None else Role.OP
    return Role.OTHER
