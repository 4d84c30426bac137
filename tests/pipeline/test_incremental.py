"""Incremental apply without compiling (issue 61): the key and what it names when it differs, the
kept graph's codec (written as JSON, rebuilt, every value checked by fake-tensor propagation), and
where a kept graph is looked for and refused. The compiled cases are test_incremental_ledgers.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from airctl.pipeline.incremental import Incremental, enabled, key
from airctl.pipeline.incremental.graph_codec import Unsupported, check_vals, decode, encode
from airctl.pipeline.incremental.keep import FORMAT, KEPT, VERSION, _write
from airctl.pipeline.incremental.replay import find


def _key(**changes: object) -> dict:
    base = {part: f"value of {part}" for part in key.PARTS}
    return {**base, **changes}


# -- the key ---------------------------------------------------------------------------------------
def test_the_same_key_differs_in_nothing() -> None:
    assert key.differences(_key(), _key()) == []


@pytest.mark.parametrize(("part", "words"), [
    ("script", "the model script"), ("inputs", "the inputs"), ("options", "the options"),
    ("torch", "the torch version"), ("torch_npu", "the torch-npu (TorchAir) version"), ("user", "the user"),
    ("install", "the install (interpreter, venv or airctl's files)"), ("mode", "the mode"),
])
def test_each_part_of_the_key_is_named_when_it_differs(part: str, words: str) -> None:
    assert key.differences(_key(), _key(**{part: "another"})) == [words]


def test_a_part_only_one_side_has_is_a_difference() -> None:
    kept = _key()
    del kept["capture"]
    assert key.differences(kept, _key()) == ["the capture level"]


def test_the_inputs_digest_sees_values_dtypes_strides_and_structure() -> None:
    import torch

    x = torch.arange(6.0).reshape(2, 3)
    digest = key.tensors_digest((x,))
    assert key.tensors_digest((x.clone(),)) == digest
    assert key.tensors_digest((x + 1,)) != digest
    assert key.tensors_digest((x.double(),)) != digest
    assert key.tensors_digest((x.t().contiguous().t(),)) != digest  # same values, other strides
    assert key.tensors_digest([x]) != digest
    assert key.tensors_digest({"x": x}) != digest


def test_the_key_names_this_install_and_its_versions(tmp_path: Path) -> None:
    import torch

    script = tmp_path / "m.py"
    script.write_text("x = 1\n")
    target = SimpleNamespace(model_path=script, entry=None, mode="max-autotune", options={"b": "1", "a": "2"},
                             torchair_off=(), seed=None, capture="default")
    loaded = SimpleNamespace(model=torch.nn.Linear(2, 2), inputs=(torch.ones(2),), module=None)
    k = key.compute(target, "sim", loaded, grad=True)
    assert k["user"] == os.getuid() and k["torch"] == torch.__version__ and k["torch_npu"]
    assert k["options"] == [("a", "2"), ("b", "1")]
    (tmp_path / "helper.py").write_text("y = 2\n")  # a file the model may import
    assert key.differences(k, key.compute(target, "sim", loaded, grad=True)) == [
        "the Python files beside the model script"]
    loaded.model.weight.data += 1
    assert "the model's weights" in key.differences(k, key.compute(target, "sim", loaded, grad=True))


def test_a_module_setting_the_forward_branches_on_changes_the_key() -> None:
    import torch

    class Attention(torch.nn.Module):
        def __init__(self, sdpa: bool) -> None:
            super().__init__()
            self.sdpa = sdpa
            self.proj = torch.nn.Linear(2, 2)

    torch.manual_seed(0)
    a = Attention(False)
    torch.manual_seed(0)
    b = Attention(True)  # the same weights; another graph
    assert key._weights(a) == key._weights(b)
    assert key._modules(a) != key._modules(b)


def test_volatile_variables_leave_the_key_and_others_change_it(monkeypatch: pytest.MonkeyPatch) -> None:
    before = key._environ()
    monkeypatch.setenv("OLDPWD", "/somewhere/else")
    monkeypatch.setenv("AIRCTL_VERBOSE", "1")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/elsewhere")  # torch sets it in a cold command, not warm
    assert key._environ() == before
    monkeypatch.setenv("AIRCTL_LLAMA_ATTENTION", "sdpa")  # read by a model script
    assert key._environ() != before


def test_incremental_is_off_with_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRCTL_INCREMENTAL", "0")
    assert not enabled()
    req = SimpleNamespace(incremental=True, target=SimpleNamespace(verbose=False))
    off = Incremental.start(req, "sim", None, True, lambda _m: None)
    assert off.found is None and off.keeper is None  # nothing looked for, nothing kept
    monkeypatch.setenv("AIRCTL_INCREMENTAL", "1")
    assert enabled()


# -- the codec -------------------------------------------------------------------------------------
def _aot_like_graph():
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x, w):
        y = torch.mm(x, w).relu()
        return (y.sum(dim=0) * 2.0, y.t())

    gm = make_fx(f, tracing_mode="fake")(torch.randn(3, 4), torch.randn(4, 5))
    for i, node in enumerate(gm.graph.nodes):
        node.meta["stack_trace"] = f'  File "model.py", line {i}, in forward\n'
        node.meta["seq_nr"] = i
    return gm


def _fakes(*tensors):
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    mode = FakeTensorMode(shape_env=ShapeEnv())
    return [mode.from_tensor(t, static_shapes=True) for t in tensors]


def test_a_graph_comes_back_with_its_nodes_meta_and_values() -> None:
    import torch

    gm = _aot_like_graph()
    data, constants = encode(gm, "")
    data = json.loads(json.dumps(data))  # what the file holds
    back = decode(data, torch.nn.Module(), constants, "")
    check_vals(back, data, _fakes(torch.randn(3, 4), torch.randn(4, 5)))
    assert [(n.name, n.op, str(n.target)) for n in back.graph.nodes] == \
        [(n.name, n.op, str(n.target)) for n in gm.graph.nodes]
    for a, b in zip(gm.graph.nodes, back.graph.nodes, strict=True):
        assert list(a.meta) == list(b.meta)
        assert a.meta["stack_trace"] == b.meta["stack_trace"] and a.meta["seq_nr"] == b.meta["seq_nr"]
        va, vb = a.meta.get("val"), b.meta.get("val")
        if isinstance(va, torch.Tensor):
            assert (va.shape, va.stride(), va.dtype) == (vb.shape, vb.stride(), vb.dtype)
    assert back.code == gm.code


def test_a_value_that_propagates_otherwise_is_refused() -> None:
    import torch

    gm = _aot_like_graph()
    data, constants = encode(gm, "")
    back = decode(data, torch.nn.Module(), constants, "")
    with pytest.raises(Unsupported, match="fake-tensor propagation gave"):
        check_vals(back, data, _fakes(torch.randn(3, 4), torch.randn(4, 6)))  # another width


def test_meta_the_codec_does_not_know_is_refused_not_dropped() -> None:
    gm = _aot_like_graph()
    next(iter(gm.graph.nodes)).meta["something_new"] = object()
    with pytest.raises(Unsupported, match="something_new"):
        encode(gm, "")


def test_a_kept_graph_never_makes_a_module_import() -> None:
    import sys

    import torch

    gm = _aot_like_graph()
    data, constants = encode(gm, "")
    node = next(n for n in data["nodes"] if n["op"] == "call_function")
    node["meta"]["keys"].append("source_fn_stack")
    node["meta"]["source_fn_stack"] = [["mm", "obj", "antigravity", "fly"]]  # imported, it opens a browser
    with pytest.raises(Unsupported, match="antigravity is not loaded"):
        decode(data, torch.nn.Module(), constants, "")
    assert "antigravity" not in sys.modules


def test_a_collectives_op_packet_in_source_fn_stack_comes_back_as_the_packet() -> None:
    """A collective's ``source_fn_stack`` names its op's packet, whose ``__module__`` is no module."""
    import torch
    import torch.distributed  # noqa: F401 - registers the _c10d_functional ops, as a model using them has

    gm = _aot_like_graph()
    packet = torch.ops._c10d_functional.all_reduce
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    node.meta["source_fn_stack"] = [("all_reduce", packet)]
    data, constants = encode(gm, "")
    raw = next(n for n in data["nodes"] if n["name"] == node.name)["meta"]["source_fn_stack"]
    assert raw == [["all_reduce", "op", "_c10d_functional::all_reduce", ""]]
    again = decode(data, torch.nn.Module(), constants, "")
    assert next(n for n in again.graph.nodes if n.name == node.name).meta["source_fn_stack"] == [("all_reduce", packet)]
    raw[0][2] = "no_such_ns::op"  # an op this torch lacks: a full compile, nothing imported
    with pytest.raises(Unsupported, match="no op no_such_ns::op"):
        decode(data, torch.nn.Module(), constants, "")


def test_an_op_that_is_not_aten_is_refused() -> None:
    import torch

    gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
    with pytest.raises(Unsupported, match="calls"):
        encode(gm, "")


# -- finding a kept graph --------------------------------------------------------------------------
def _kept_run(out: Path, name: str, k: dict) -> Path:
    run = out / name
    (run / "incremental").mkdir(parents=True, mode=0o700)
    (run / "index.json").write_text("{}")
    from airctl.io.compressed import gzip_bytes

    _write(run / KEPT, gzip_bytes(json.dumps({"format": FORMAT, "version": VERSION, "key": k})))
    return run


def test_the_newest_run_with_the_same_key_is_found(tmp_path: Path) -> None:
    _kept_run(tmp_path, "20261206-100000-m-aaaa", _key())
    newer = _kept_run(tmp_path, "20261206-110000-m-bbbb", _key())
    _kept_run(tmp_path, "20261206-120000-m-cccc", _key(inputs="other"))
    found, why = find(tmp_path, _key())
    assert found is not None and found.run == newer and why == ""


def test_no_run_with_the_key_says_what_changed_since_the_newest(tmp_path: Path) -> None:
    _kept_run(tmp_path, "20261206-120000-m-cccc", _key(inputs="other", torch="2.0"))
    found, why = find(tmp_path, _key())
    assert found is None and why == "since 20261206-120000-m-cccc, the torch version, the inputs changed"
    assert find(tmp_path / "nothing", _key()) == (None, "no run of this folder kept a pre-pass graph")


def test_a_kept_graph_others_may_write_is_refused(tmp_path: Path) -> None:
    run = _kept_run(tmp_path, "20261206-100000-m-aaaa", _key())
    os.chmod(run / KEPT, 0o666)
    found, why = find(tmp_path, _key())
    assert found is None and "may be written by others" in why


def test_a_zero_dim_tensor_is_digested_by_its_value() -> None:
    """A 0-dim input (a scale, a step count) once made every compile of its model fail here."""
    import torch

    assert key.tensors_digest((torch.tensor(2.0),)) != key.tensors_digest((torch.tensor(3.0),))
    assert key.tensors_digest((torch.tensor(2.0),)) == key.tensors_digest((torch.tensor(2.0),))


def test_the_key_digests_the_bytes_the_script_ran_from_not_the_file_changed_since(tmp_path: Path) -> None:
    import hashlib

    from airctl.pipeline.run.model_script import load_model_script

    script = tmp_path / "m.py"
    script.write_text("model = abs\ninputs = (-1,)\n")
    loaded = load_model_script(script)
    script.write_text("model = abs\ninputs = (-2,)\n")  # after the load: not what this compile runs
    ran = hashlib.sha256(b"model = abs\ninputs = (-1,)\n").hexdigest()
    assert key._script_digest(loaded, script) == ran
    now = hashlib.sha256(script.read_bytes()).hexdigest()
    assert key._script_digest(SimpleNamespace(module=object()), script) == now  # no loader's bytes: the file
