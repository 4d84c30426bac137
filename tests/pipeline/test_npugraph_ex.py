"""npugraph_ex, TorchAir's aclgraph successor (issue 30): the mode through compile, its options, its
stream ops, its recaptures, and the wheel's package under sim."""

from __future__ import annotations

import json
import sys

import pytest

from airctl.errors import AirctlError
from airctl.pipeline.compile.options import apply_options, parse_options
from tests.conftest import MODELS, REPO, ledger_json

NPUGRAPH_EX_FX_PASSES = ["optimize_noop_ops", "recover_view_inplace_pattern", "apply_pattern_passes",
                         "view_to_reshape"]
ACLGRAPH_PASSES = ["apply_event_closure_with_multi_stream", "apply_event_record", "reinplace_inplaceable_ops_pass",
                   "resolve_default_stream_markers"]


@pytest.fixture(autouse=True, scope="module")
def _torchair_compiles_after_this_module():
    """npugraph_ex's one-time patch registers Python kernels (``py_impl``) that TorchAir's own one-time
    patch then registers again without asking first, which raises: in one process, a TorchAir compile
    after an npugraph_ex compile fails, on an NPU as under sim (TorchAir's order, faithfully kept). This
    worker goes on to other files' in-process compiles: take back what this module's compiles added."""
    import torch

    aten = torch.ops.aten
    ops = [aten.to.other, aten.type_as.default, aten.matmul_backward.default]
    before = {op: set(op.py_kernels) for op in ops}
    yield
    for op in ops:
        for key in set(op.py_kernels) - before[op]:
            del op.py_kernels[key]
        op._dispatch_cache.clear()


# -- --option KEY=VALUE (no compile) ---------------------------------------------------------------
class _Option:
    """The shape of npugraph_ex's/TorchAir's OptionValue: value, default, optional; checks on set."""

    def __init__(self, default, optional=None) -> None:
        self.default, self.optional, self.value = default, optional, default


class _Config:
    def __init__(self) -> None:
        self.capture_limit = type("IntRangeValue", (_Option,), {})(64)
        self.force_eager = _Option(False, [True, False])
        self.capture_error_mode = _Option("global", ["global", "thread_local", "relaxed"])
        self.post_grad_custom_pre_pass = type("CallableValue", (_Option,), {})(None)
        self._fixed_attrs = ["capture_limit", "force_eager", "capture_error_mode", "post_grad_custom_pre_pass"]

    def __setattr__(self, key, value) -> None:
        if "_fixed_attrs" in self.__dict__ and isinstance(getattr(self, key, None), _Option):
            getattr(self, key).value = value
        else:
            object.__setattr__(self, key, value)


def test_options_are_converted_by_their_kind_and_recorded() -> None:
    config = _Config()
    applied = apply_options(config, parse_options(["capture_limit=4", "force_eager=true",
                                                   "capture_error_mode=relaxed"]), "npugraph_ex")
    assert applied == {"capture_limit": 4, "force_eager": True, "capture_error_mode": "relaxed"}
    assert config.capture_limit.value == 4 and config.force_eager.value is True


def test_an_unknown_option_names_the_closest_ones() -> None:
    with pytest.raises(AirctlError) as e:
        apply_options(_Config(), {"capture_limt": "2"}, "npugraph_ex")
    assert "did you mean capture_limit" in e.value.message
    assert "force_eager" in e.value.hint


@pytest.mark.parametrize("pair, words", [("force_eager=maybe", "choose one of: True, False"),
                                         ("capture_limit=many", "an integer"),
                                         ("post_grad_custom_pre_pass=f", "--passes")])
def test_a_bad_value_says_what_the_option_takes(pair: str, words: str) -> None:
    with pytest.raises(AirctlError) as e:
        apply_options(_Config(), parse_options([pair]), "npugraph_ex")
    assert words in f"{e.value.message} {e.value.hint}"


def test_an_option_must_be_key_equals_value() -> None:
    with pytest.raises(AirctlError, match="KEY=VALUE"):
        parse_options(["capture_limit"])


def test_a_graph_of_npugraph_ex_ops_alone_is_checked_as_npugraph_ex() -> None:
    """No mode given, no ledger: only npugraph_ex reads its ops, so that is the mode (clean there)."""
    from airctl.pipeline.check import check_source

    outcome = check_source(REPO / "fixtures" / "checks" / "fx" / "foreign_stream_ops_npugraph_ex.json")
    assert [(c.mode, c.findings) for c in outcome.graphs] == [("npugraph_ex", [])]


# -- the wheel's npugraph_ex under sim -------------------------------------------------------------
@pytest.mark.slow
def test_sim_imports_npugraph_ex_as_the_wheel_lays_it_out() -> None:
    from airctl.backends.sim import sim_context
    from airctl.pipeline.run.execution import RunExecution
    from airctl.sim.session import session

    with session(sim_context(RunExecution())):
        import npugraph_ex
        import torch

        assert "site-packages/torch_npu/dynamo/npugraph_ex" in npugraph_ex.__file__
        assert torch.npu.npugraph_ex.compile_fx is not None
        assert callable(npugraph_ex.get_npu_backend) and npugraph_ex.CompilerConfig().mode.value == "npugraph_ex"
        assert str(torch.ops.npugraph_ex.scope_enter.default._schema).startswith("npugraph_ex::scope_enter(")
    assert "npugraph_ex" not in sys.modules


# -- compile --mode npugraph_ex --------------------------------------------------------------------
def _compile(model: str, out, **kwargs):
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    return compile_model(CompileRequest.of(MODELS / f"{model}.py", mode="npugraph_ex", out_dir=out, backend="sim",
                                        **kwargs))


@pytest.mark.slow
@pytest.mark.parametrize("model", ["seed", "transformer", "graph_break", "llama"])
def test_fixtures_compile_with_npugraph_ex_passes_as_stages(tmp_path, model: str) -> None:
    result = _compile(model, tmp_path)
    index = json.loads((result.ledger_dir / "index.json").read_text())
    assert index["status"] == "ok", index["error"]
    assert index["mode"] == "npugraph_ex" and index["execution"]["matches_eager"] is True
    for graph in index["graphs"]:
        names = [s["name"] for s in graph["stages"]]
        for p in NPUGRAPH_EX_FX_PASSES + ACLGRAPH_PASSES:
            assert f"after:{p}" in names, (p, names)
        assert "fx-final" in names
    assert {d["stage"] for d in index["dumps"]} == {"generated-code"}  # npugraph_ex's own generated code
    assert all(c["event"] == "capture" and c["reason"] == "first call" for c in index["captures"])


@pytest.mark.slow
def test_a_stream_pass_file_inserts_npugraph_ex_ops_checked_and_drawn_under_its_semantics(tmp_path) -> None:
    from airctl.io.json_io import from_dict
    from airctl.render.lanes import build_lanes
    from airctl.verify import verify

    result = _compile("seed", tmp_path, passes_file=str(REPO / "passes" / "stream.yaml"))
    assert result.error is None and result.execution.matches_eager
    final = next(s for s in result.index.graphs[0].stages if s.name == "fx-final")
    graph = from_dict(ledger_json(result.ledger_dir / final.file))
    ops = {n.op for n in graph.nodes}
    assert {"npugraph_ex.scope_enter.default", "npugraph_ex.record.default", "npugraph_ex.wait.default"} <= ops
    assert not any(op.startswith("air.") for op in ops)
    findings = verify(graph, "npugraph_ex")
    assert {(f.rule, f.mode) for f in findings} == {("race_cross_stream_without_wait", "npugraph_ex")}
    assert "the wait goes before add" in findings[0].hint and "kind: wait" in findings[0].hint  # YAML, any mode
    view = build_lanes(graph, "npugraph_ex", findings)
    assert view.mode == "npugraph_ex" and len(view.streams) == 2 and view.arrows


@pytest.mark.slow
def test_recaptures_are_recorded_with_their_reasons_and_the_capture_limit_fallback(tmp_path) -> None:
    from airctl.cli.summary import capture_lines

    result = _compile("changing_shapes", tmp_path, options={"capture_limit": "2"})
    index = result.index.to_json()
    assert index["status"] == "ok" and index["options"] == {"capture_limit": 2}
    rows = [c for c in index["captures"] if c["graph"] == "2-inference"]
    assert [(c["event"], c["call"]) for c in rows] == [("capture", 1), ("recapture", 2), ("fallback", 3)]
    assert rows[1]["reason"] == "input shapes changed: [8] (captured before: [6])"
    assert "capture_limit 2 reached" in rows[2]["reason"]
    assert "graph 2-inference recaptured 1 time, fell back to eager at call 3" in capture_lines(index["captures"])


@pytest.mark.slow
def test_a_transformers_llama_compiles_with_npugraph_ex(tmp_path, monkeypatch) -> None:
    pytest.importorskip("transformers")
    import airctl.sim.torch_npu as standin

    if not hasattr(standin, "npu_fusion_attention"):  # transformers imports the name when torch_npu imports
        monkeypatch.setattr(standin, "npu_fusion_attention", lambda *a, **k: None, raising=False)
    script = tmp_path / "hf_llama.py"
    script.write_text(HF_LLAMA)
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    # inplace_pass=False: with it on, the aclgraph reinplace_inplaceable_ops_pass turns transformers'
    # torch.diff into sub_ on a view overlapping the one it reads, and the results differ (docs/sim.md)
    result = compile_model(CompileRequest.of(script, mode="npugraph_ex", out_dir=tmp_path / "runs", backend="sim",
                                          options={"inplace_pass": "False"}))
    assert result.error is None, result.error
    assert result.execution.matches_eager
    names = [s.name for s in result.index.graphs[0].stages]
    assert "after:apply_pattern_passes" in names and "after:apply_event_closure_with_multi_stream" in names


HF_LLAMA = '''
import torch
from transformers import LlamaConfig, LlamaForCausalLM


def get_model():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(config).eval().npu()


def get_inputs():
    torch.manual_seed(0)
    return (torch.randint(0, 128, (2, 16)).npu(),)


def step(model, input_ids):
    with torch.no_grad():
        return model(input_ids, use_cache=False).logits
'''
