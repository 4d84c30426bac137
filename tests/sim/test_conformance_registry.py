"""What TorchAir's system tests need from sim beyond the fake device (issue 58): the tests' op registry as an
IR declaration the harness puts beside them, the device generator torch.npu hands TorchAir's graph RNG state,
llm_datadist's wrap of device memory, CANN's op catalogue, and under ``airctl run`` a graph with an op that has no
CPU kernel computed from its GE ops, and a compiled graph freed by ``torch._dynamo.reset()``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.sim.standalone import airctl_run, python
from tests.warm_process import WarmProcess

REGISTRY = REPO / "airctl" / "sim" / "conformance" / "ascend_ir.yaml"


def test_the_tests_op_registry_is_a_declaration_sim_reads(tmp_path: Path) -> None:
    from airctl.sim.ascend_ir_files import find_declarations

    shutil.copyfile(REGISTRY, tmp_path / "ascend_ir.yaml")  # what scripts/conformance.py does
    table = find_declarations(tmp_path / "torchair_st.py")
    assert table.lookup("MyOpTestv3") == ("SUCCESS", [("var", "required"), ("updates", "dynamic"),
                                                      ("indices", "required")], [("y", "required")], [])
    assert table.lookup("MyOpTestv4")[3] == [("use_indices", "VT_NAMED_ATTRS")]  # GE's type TorchAir rejects
    assert table.declared["TestV1"].inputs[2] == ("x3", "optional")
    assert table.lookup("MyOpTestv5")[0] == "ERROR"  # the tests' registry has it unregistered


def test_cann_compat_knows_canns_catalogue_from_torchairs_generated_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from airctl.sim.ascend_ir import AscendIr
    from airctl.sim.torchair_core import RAW_OPS_SUFFIX, cann_compat

    raw = types.ModuleType("torchair." + RAW_OPS_SUFFIX)  # one constructor per op type of CANN's catalogue

    def Add(x1, x2):  # noqa: N802 - named after the GE op type, as TorchAir's are
        return x1

    Add.__module__ = raw.__name__
    raw.Add = Add
    raw.IrDef = object  # a name the module imports is no op type
    monkeypatch.setitem(sys.modules, raw.__name__, raw)
    assert cann_compat(AscendIr(), "Add", ["x"], []) == ""
    assert cann_compat(AscendIr(), "TestV100", [], []) == (
        "OperatorFactory find optype TestV100 failed, maybe you need upgrade cann version.")
    assert cann_compat(AscendIr(), "IrDef", [], []).startswith("OperatorFactory find optype IrDef failed")


def _python(code: str) -> subprocess.CompletedProcess:
    """torch_npu's stand-in registers the device: a process of its own."""
    return python(code, cwd=REPO)


def test_the_npu_generator_keeps_the_offset_torchairs_graph_rng_state_moves() -> None:
    res = _python("""
        import torch
        from airctl.sim.torch_npu import npu
        gen = npu.default_generators[0]
        torch.seed()                                   # torch's CPU seed: 64 random bits, maybe over 2**63 - 1
        assert gen.initial_seed() == 67280421310721    # a device's: c10's default (TorchAir's int64 Const holds it)
        gen.set_offset(gen.get_offset() + 12)          # what ge._ge_graph._GraphRngState.consume does
        assert gen.get_offset() == 12
        npu.manual_seed(5)
        assert (gen.initial_seed(), gen.get_offset(), torch.initial_seed()) == (5, 0, 5)
        print("ok")
    """)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-3000:]


def test_llm_datadist_tensors_are_views_of_the_memory_at_the_addresses() -> None:
    res = _python("""
        import torch
        from airctl.sim import torchair_core as core
        x = torch.arange(6, dtype=torch.float32)
        status, (t,) = core.as_torch_tensors([2, 3], core.TorchDataType.FLOAT32, [x.data_ptr()])
        assert status == 0 and t.device.type == "privateuseone" and t.shape == (2, 3)
        assert t.cpu().tolist() == [[0, 1, 2], [3, 4, 5]]
        t.fill_(7)                                     # the same memory: nothing copied
        assert x.tolist() == [7] * 6
        assert core.as_torch_tensors([0], core.TorchDataType.FLOAT32, [0])[1][0].numel() == 0
        assert core.as_torch_tensors([2], 99, [x.data_ptr()]) == (1, [])
        try:
            core.as_torch_tensors([2], core.TorchDataType.FLOAT32, [0])
        except RuntimeError as e:
            assert "device address 0" in str(e)
        else:
            raise AssertionError("a null address was wrapped")
        print("ok")
    """)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-3000:]


SCRIPT = '''
import gc
import torch
import torchair
from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph

lib = torch.library.Library("sim_test", "DEF")
lib.define("twin(Tensor x) -> Tensor")
torch.library.impl(lib, "twin", "Meta")(lambda x: torch.empty_like(x))   # no CPU kernel


@torchair.register_fx_node_ge_converter(torch.ops.sim_test.twin.default)
def convert_twin(x, meta_outputs=None):
    return torchair.ge.Clone(x)                                          # GE's TensorMove


twin = torch.compile(lambda x: torch.ops.sim_test.twin(x) * 2, backend=torchair.get_npu_backend(), dynamic=False)
x = torch.arange(4.0)
print("twin:", twin(x).tolist())

model = torch.compile(lambda x: torch.add(x, 1.0), backend=torchair.get_npu_backend(), dynamic=True)
model(torch.randn(2, 2))
del model, twin
torch._dynamo.reset()
gc.collect()
print("alive after reset:", sum(isinstance(o, GeConcreteGraph) for o in gc.get_objects()))
'''


@pytest.mark.slow
def test_under_airctl_run_graphs_compute_from_ge_ops_and_reset_frees_them(tmp_path: Path,
                                                                          warm_process: WarmProcess) -> None:
    """An op with a Meta kernel only runs as GE would, from the ops its converter emitted; and TorchAir releases a
    graph's GE resources when it is deleted: what airctl records of the graph must not keep it alive."""
    res = airctl_run(warm_process, tmp_path, "ge_ops_and_reset.py", SCRIPT)
    assert "twin: [0.0, 2.0, 4.0, 6.0]" in res.stdout
    assert "alive after reset: 0" in res.stdout
