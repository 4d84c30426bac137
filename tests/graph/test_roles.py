"""airctl/graph/roles.py: the one node-role classifier the verifier and the executor share."""

from __future__ import annotations

import pytest

from airctl.graph.model import Node
from airctl.graph.roles import Role, air_name, role_of


@pytest.mark.parametrize(("op", "role"), [
    ("air.scope_enter.default", Role.SCOPE_ENTER),
    ("air.scope_exit.default", Role.SCOPE_EXIT),
    ("air.record.default", Role.RECORD),
    ("air.wait.default", Role.WAIT),
    ("air.wait_tensor.default", Role.WAIT_TENSOR),
    ("air.tagged_event_record.default", Role.TAGGED_RECORD),
    ("air.tagged_event_record_on_stream.default", Role.TAGGED_RECORD),
    ("air.tagged_event_wait.default", Role.TAGGED_WAIT),
    ("air.tagged_event_wait_on_stream.default", Role.TAGGED_WAIT),
    ("air.record_tagged_stream.default", Role.STREAM_TAG),
    ("air.record_tagged_stream_.default", Role.STREAM_TAG),
    ("air.tagged_stream_wait_stream.default", Role.STREAM_TAG),
    ("air.some_future_op.default", Role.OP),
    ("aten.mm.default", Role.OP),
    ("_operator.getitem", Role.OP),
])
def test_call_nodes(op: str, role: Role) -> None:
    assert role_of(Node("n", op, kind="call_function")) is role


def test_inputs_outputs_and_other_kinds() -> None:
    assert role_of(Node("x", "placeholder", kind="placeholder")) is Role.INPUT
    assert role_of(Node("w", "layer.weight", kind="get_attr")) is Role.INPUT
    assert role_of(Node("output", "output", kind="output")) is Role.OUTPUT
    assert role_of(Node("m", "mod", kind="call_module")) is Role.OP
    assert role_of(Node("?", "something", kind="mystery")) is Role.OTHER


def test_scope_and_sync_ops_are_recognised_whatever_their_kind() -> None:
    """A reader may leave ``kind`` at its default: scope, record and wait are known by their op alone."""
    assert role_of(Node("r", "air.record.default")) is Role.RECORD
    assert role_of(Node("e", "air.scope_enter.default", kind="mystery")) is Role.SCOPE_ENTER


def test_which_roles_run_as_ops() -> None:
    ops = {r for r in Role if r.is_op}
    assert ops == {Role.OP, Role.WAIT_TENSOR, Role.TAGGED_RECORD, Role.TAGGED_WAIT, Role.STREAM_TAG}
    assert str(Role.SCOPE_ENTER) == "scope_enter" and Role.RECORD == "record"


def test_air_name() -> None:
    assert air_name("air.scope_enter.default") == "scope_enter"
    assert air_name("air.wait") == "wait"
    assert air_name("aten.mm.default") is None and air_name("air") is None
