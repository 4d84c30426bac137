"""``airctl show --node``: a node's origin chain, exact, in every mode (compiles: slow).

fixtures/models/two_chains.py with passes/two_chains.yaml: the user pass ``right-chain-on-stream1``
moves ``mm_10`` to stream_1 and creates ``record_default``; under aclgraph TorchAir's own pass
``apply_event_closure_with_multi_stream`` creates ``tagged_event_*`` nodes. With
fixtures/passes/fuse/fuse_mm_add.yaml ``mm_19`` is fused into the add (``addmm``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.pipeline.show import node_chains

pytestmark = pytest.mark.slow
MODES = ["max-autotune", "reduce-overhead", "npugraph_ex"]
REPO = Path(__file__).resolve().parents[2]


def _chain(result, name: str) -> dict:
    (chain,) = node_chains(result.ledger_dir, name)["chains"]
    return chain


def _events(chain: dict) -> list[tuple]:
    return [(s["stage"], s["event"], s["name"], s["detail"], s["by"] and s["by"]["name"]) for s in chain["changes"]]


@pytest.mark.parametrize("mode", MODES)
def test_a_node_moved_by_a_user_pass(compile_fixture, mode: str) -> None:
    chain = _chain(compile_fixture("two_chains", mode, "passes/two_chains.yaml"), "mm_10")
    assert chain["found_as"] == "FX node" and chain["op"] == "aten.mm.default"
    assert _events(chain) == [("yaml:right-chain-on-stream1", "moved", "mm_10", "default -> stream_1",
                               "right-chain-on-stream1")]
    assert chain["changes"][0]["by"]["by"] == "user pass"
    assert chain["changes"][0]["by"]["where"] == f"{REPO}/passes/two_chains.yaml:9"
    assert chain["origin"]["by"] == "AOT autograd"
    assert chain["dynamo"] == {"nodes": ["x_10"], "op": "torch.mm", "how": "source line, module and order"}
    assert chain["source"] == f"{REPO}/fixtures/models/two_chains.py:26" and chain["module"] == "right"
    if mode == "max-autotune":
        assert [(g["stage"], g["name"], g["stream"]) for g in chain["ge_ops"]] == [
            ("ge-original", "MatMul_10", "stream_1"), ("ge-optimized", "MatMul_10", "stream_1")]
    else:
        assert chain["ge_ops"] == [] and chain["ge_note"] is None  # aclgraph: no GE graph


@pytest.mark.parametrize("mode", MODES)
def test_a_node_created_by_a_user_pass(compile_fixture, mode: str) -> None:
    chain = _chain(compile_fixture("two_chains", mode, "passes/two_chains.yaml"), "record_default")
    assert _events(chain) == [("yaml:right-chain-on-stream1", "created", "record_default", None,
                               "right-chain-on-stream1")]
    assert chain["origin"]["name"] == "right-chain-on-stream1" and chain["origin"]["by"] == "user pass"
    assert chain["source"] == f"{REPO}/passes/two_chains.yaml:9" and chain["dynamo"] is None
    if mode == "max-autotune":
        assert chain["ge_ops"] == [] and chain["ge_note"].startswith("no GE op: a stream op becomes a control edge")


@pytest.mark.parametrize("mode", MODES)
def test_a_node_created_by_torchair_or_no_such_node(compile_fixture, mode: str) -> None:
    result = compile_fixture("two_chains", mode, "passes/two_chains.yaml")
    if mode == "max-autotune":  # GE: TorchAir's passes there add no FX node; the GE op leads to its FX node
        chain = _chain(result, "MatMul_19")
        assert chain["found_as"] == "GE op" and chain["node"] == "mm_19" and chain["dynamo"]["nodes"] == ["x_19"]
        from airctl.errors import AirctlError

        with pytest.raises(AirctlError, match="no FX node, Dynamo node, GE op or profiled task named"):
            node_chains(result.ledger_dir, "tagged_event_record_default")
        return
    chain = _chain(result, "tagged_event_record_default")
    assert _events(chain) == [("after:apply_event_closure_with_multi_stream", "created",
                               "tagged_event_record_default", None, "apply_event_closure_with_multi_stream")]
    assert chain["origin"]["by"] == "TorchAir FX pass" and chain["source"] is None
    assert chain["origin_note"] == "TorchAir's pass made it: no user source line"


@pytest.mark.parametrize("mode", MODES)
def test_a_node_fused_away(compile_fixture, mode: str) -> None:
    result = compile_fixture("two_chains", mode, "fixtures/passes/fuse/fuse_mm_add.yaml")
    chain = _chain(result, "mm_19")
    assert _events(chain) == [("yaml:fuse-mm-add", "removed", None, "fused into or replaced by addmm_default",
                               "fuse-mm-add")]
    assert [s["name"] for s in chain["stages"]][:2] == ["mm_19", None]
    assert chain["dynamo"]["nodes"] == ["x_19"] and chain["source"].endswith("two_chains.py:26")
    made = _chain(result, "addmm_default")
    assert _events(made)[0][:2] == ("yaml:fuse-mm-add", "created")
    if mode != "max-autotune":  # aclgraph's reinplacing replaces the op in place, under the same name
        assert _events(made)[1:] == [("after:reinplace_inplaceable_ops_pass", "replaced", "addmm_default",
                                      "aten.addmm.default -> aten.addmm_.default", "reinplace_inplaceable_ops_pass")]
    if mode == "max-autotune":
        assert chain["ge_note"] == "no GE op: the node is gone before fx-final"
        # TorchAir converts addmm to a matmul and an Add; the Add carries the FX node's name
        assert [(g["stage"], g["op"]) for g in made["ge_ops"]] == [("ge-original", "Add"), ("ge-optimized", "Add")]
