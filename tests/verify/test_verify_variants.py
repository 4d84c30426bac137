"""The verifier's findings on graphs that take its other paths (no in-place op, repeated names, no
scope markers, long multi-stream chains; tests/verify/verify_variants.py) equal the golden ones,
which the verifier wrote before its index-based stamps: a speed-up that changes one finding, its
order, message, hint or source fails here."""

from __future__ import annotations

import json

import pytest

from tests.verify.verify_variants import GOLDEN, SEEDS, VARIANTS, findings_digest


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variant_graphs_give_the_golden_findings_in_every_mode(variant: str) -> None:
    golden = json.loads(GOLDEN.read_text())[variant]
    assert len(golden) == SEEDS
    for seed in range(SEEDS):
        assert findings_digest(variant, seed) == golden[str(seed)], f"{variant} seed {seed}"


def test_a_repeated_name_stands_for_its_latest_node_walked() -> None:
    """A wait on ``rec`` is ordered by the record walked before it, though a later node (read by
    nothing) takes the name again: no race under reduce-overhead, as a name-keyed table of stamps
    gave (the later ``rec`` is still a side-stream op the output is not ordered after)."""
    from airctl.graph.model import Graph, Node
    from airctl.verify import verify

    def fx(name: str, op: str, ins: tuple[str, ...] = (), args: list | None = None) -> Node:
        return Node(name, op, inputs=list(ins), attrs={"args": [f"%{i}" for i in ins] if args is None else args},
                    kind="call_function")

    nodes = [Node("x", "placeholder", kind="placeholder"),
             fx("enter", "air.scope_enter.default", args=[["_user_stream_label"], ["s2"]]),
             fx("mm", "aten.mm.default", ("x", "x")),
             fx("rec", "air.record.default", args=[]),
             fx("exit", "air.scope_exit.default", args=[]),
             fx("wait", "air.wait.default", ("rec",), args=[["%rec"]]),
             fx("relu", "aten.relu.default", ("mm",)),
             fx("enter2", "air.scope_enter.default", args=[["_user_stream_label"], ["s2"]]),
             fx("rec", "aten.t.default", ("x",)),
             fx("exit2", "air.scope_exit.default", args=[]),
             Node("output", "output", inputs=["relu"], attrs={"args": [["%relu"]]}, kind="output")]
    assert verify(Graph("dup", "fx", nodes), "reduce-overhead") == []
    assert [f.rule for f in verify(Graph("dup", "fx", nodes), "max-autotune")] == ["stream_not_joined"]
