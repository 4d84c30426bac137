"""What TorchAir's own system tests need from sim (issue 31): the ``npu`` device behind PrivateUse1,
the ``_privateuse1_backend`` stand-in, the C++ extension's argument checks, TorchAir's object
identity under ``airctl run``, child processes, and the conformance harness's reading of unittest."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.sim.standalone import airctl_run, python
from tests.warm_process import WarmProcess


def test_the_standin_fake_device_holds_real_data_and_answers_torch_accelerator() -> None:
    res = python("""
        import sys, types, torch
        sys.path.insert(0, "airctl/sim/conformance")
        import _privateuse1_backend as pu
        d = pu.npu_device()
        assert str(d) == "privateuseone:0"
        torch.utils.rename_privateuse1_backend("npu")
        fake = types.ModuleType("npu"); fake.is_available = lambda: True   # what the tests register
        torch._register_device_module("npu", fake)
        x = torch.arange(6.).reshape(2, 3).to(d)
        assert x.device.type == "npu" and x.cpu().tolist() == [[0, 1, 2], [3, 4, 5]]
        y = (x + 1) * x.t().t()              # every other op runs on CPU aliases of the same memory
        assert y.device.type == "npu" and y.cpu().tolist() == [[0, 2, 6], [12, 20, 30]]
        x.add_(1)                             # in place: the caller's tensor, its memory changed
        assert x[1].cpu().tolist() == [4, 5, 6]
        assert torch.abs(-x).cpu().sum().item() == 21   # an out= kernel that resizes its output
        z = torch.empty(3, device="npu").fill_(7)
        assert z.cpu().tolist() == [7, 7, 7]
        assert torch.accelerator.current_accelerator().type == "npu"
        assert torch.accelerator.current_stream().device.type == "npu"
        g = pu.default_generator(0); g.set_offset(g.get_offset() + 4)
        assert pu.default_generator(0).get_offset() == 4
        print("ok")
    """, cwd=REPO)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-3000:]


def test_run_and_auto_tune_check_their_arguments_as_torchairs_cpp_does() -> None:
    import torch

    from airctl.sim import ge_call_args as g

    with pytest.raises(RuntimeError, match="element 0 is None"):
        g.run_args(([None], [], None))
    with pytest.raises(RuntimeError, match="element 1 is not a Tensor"):
        g.run_args(([torch.ones(1), 123], [], None))
    with pytest.raises(RuntimeError, match="element 0 is not a Tensor"):  # assigned outputs: None allowed
        g.run_args(([torch.ones(1)], [123], None))
    assert g.run_args(([torch.ones(1)], [None], None))[1] == [None]
    with pytest.raises(RuntimeError, match="not a list or tuple"):
        g.run_args((torch.ones(1), [], None))
    with pytest.raises(RuntimeError, match="element 0 is None"):
        g.auto_tune_args(([None], None))
    with pytest.raises(RuntimeError, match="expected Stream object. Got 'int'"):  # the stream is parsed first
        g.auto_tune_args(([None], 3))
    with pytest.raises(RuntimeError, match=r"Parse arg with signature Run\("):
        g.run_args(([torch.ones(1)],))


def _model(out_dims: list[int], data_dims: list[int]) -> bytes:
    from airctl.io.ge_schema import message_class

    model = message_class("ModelDef")()
    graph = model.graph.add(name="g")
    data = graph.op.add(name="x", type="Data")
    data.output_desc.add().shape.dim.extend(data_dims)
    net = graph.op.add(name="out", type="NetOutput")
    net.input_desc.add().shape.dim.extend(out_dims)
    return model.SerializeToString()


def test_compile_checks_a_static_graphs_outputs_against_the_fx_shapes() -> None:
    from airctl.sim.ge_call_args import check_net_output

    check_net_output(_model([2, 2], [2, 2]), 1, [[2, 2]])  # same: compiles
    with pytest.raises(RuntimeError, match=r"The dim of Ascend GE graph NetOutput: \[2, 2\] is not equal to FX "
                                           r"graph NetOutput: \[1, 2\]"):
        check_net_output(_model([2, 2], [2, 2]), 1, [[1, 2]])
    with pytest.raises(RuntimeError, match="The dim size of Ascend GE graph NetOutput"):
        check_net_output(_model([2, 2], [2, 2]), 1, [[1, 2, 3]])
    with pytest.raises(RuntimeError, match="The number of Ascend GE graph NetOutput: 1 is not equal to FX graph "
                                           "NetOutput: 2"):
        check_net_output(_model([2, 2], [2, 2]), 1, [[2, 2], [2, 2]])
    check_net_output(_model([2, 2], [-1, 2]), 1, [[1, 2]])  # a dynamic graph: GE's summary has no shapes
    check_net_output(_model([2, 2], [2, 2]), 0, [[1, 2]])  # the CPU executor: not checked


def test_cann_compat_answers_for_declared_ops_in_torchairs_words() -> None:
    from airctl.sim.ascend_ir import AscendIr, IrDef
    from airctl.sim.torchair_core import CheckAclnnAvaliable, cann_compat, npu_storage_sizes

    table = AscendIr(declared={"MyOp": IrDef([("x", "required"), ("bias", "optional")], [("y", "required")],
                                             [("alpha", "VT_FLOAT")])})
    assert cann_compat(table, "MyOp", ["bias"], ["alpha"]) == ""
    assert cann_compat(table, "MyOp", ["bias", "scale"], ["beta"]) == (
        "optype MyOp unsupported optional input [scale], optional attr [beta], please upgrade cann version.")
    assert cann_compat(table, "Add", ["x"], []) == ""  # an op sim has no catalogue of: compatible
    assert table.missing == []  # asking does not count as a lookup that failed
    assert CheckAclnnAvaliable("aclnnAdd") is False
    import torch

    assert npu_storage_sizes(torch.ones(2, 3, 4)[0]) == [2, 3, 4]


def test_a_malformed_keyword_custom_op_describes_no_ir() -> None:
    from airctl.sim.ascend_ir import from_keyword_call

    ir = from_keyword_call(3, 3, 3)
    assert (ir.inputs, ir.outputs, ir.attrs) == ([], [], [])


SCRIPT = '''
import functools, subprocess, sys
import torch, torchair
from torchair.core._backend import TorchNpuGraph
from torchair.ge._ge_graph import GeGraph
import torchair.ge as ge

config = torchair.CompilerConfig()
backend = torchair.get_npu_backend(compiler_config=config)
assert isinstance(backend, functools.partial), type(backend)
assert backend.keywords["compiler_config"] is config          # what cache_compile reads
assert torchair.get_npu_backend.__module__ == "torchair.npu_fx_compiler", torchair.get_npu_backend.__module__
m = torch.compile(lambda x: x * 2, backend=backend)
assert m(torch.ones(2)).tolist() == [2.0, 2.0]
try:
    with GeGraph():
        ge.custom_op("CustomOp", inputs=3, outputs=None)
except AssertionError as e:
    assert "Invalid input type:int" in str(e), e
else:
    raise AssertionError("custom_op accepted inputs=3")
try:
    TorchNpuGraph().run([None])
except RuntimeError as e:
    assert "element 0 is None" in str(e), e
else:
    raise AssertionError("run([None]) was accepted")
# a fresh Python that sets its own SIGTERM handler, then imports TorchAir (whose import installs
# handlers that swallow SIGTERM and SIGINT): under sim the process keeps its own
child = """
import signal, sys
mine = lambda *a: sys.exit(42)
signal.signal(signal.SIGTERM, mine)
import torch, torchair, torch_npu, torchair.core._backend
kept = [signal.getsignal(signal.SIGTERM) is mine, signal.getsignal(signal.SIGINT) is signal.default_int_handler]
print(torch_npu.__name__, hasattr(torchair, "inference"), "handlers kept" if all(kept) else kept)
"""
out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
print("child:", out.stdout.strip(), out.stderr[-2000:] if out.returncode else "")
print("script ok")
'''


@pytest.mark.slow
def test_under_airctl_run_torchairs_objects_keep_their_identity_and_children_get_sim(tmp_path: Path,
                                                                                     warm_process: WarmProcess) -> None:
    """`airctl run` forked from the warm process (tests/warm_process.py); the script's child is a fresh interpreter: it
    gets sim, and TorchAir's import there leaves the child's SIGTERM and SIGINT handlers alone."""
    res = airctl_run(warm_process, tmp_path, "identity.py", SCRIPT)
    assert "child: airctl.sim.torch_npu True handlers kept" in res.stdout
    assert "script ok" in res.stdout


def _harness():
    spec = importlib.util.spec_from_file_location("conformance_harness", REPO / "scripts" / "conformance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


LOG = """test_a (__main__.T.test_a) ... ok
test_b (__main__.T.test_b) ... FAIL
test_c (__main__.T.test_c) ... ERROR
some print from the test
======================================================================
ERROR: test_c (__main__.T.test_c)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "x.py", line 3, in test_c
    raise RuntimeError("sim: boom")
RuntimeError: sim: boom

======================================================================
FAIL: test_b (__main__.T.test_b)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "x.py", line 9, in test_b
    self.assertTrue(False)
AssertionError: False is not true

----------------------------------------------------------------------
Ran 4 tests in 0.010s

FAILED (failures=1, errors=1, skipped=1)
"""


def test_the_harness_reads_unittests_report() -> None:
    h = _harness()
    r = h.FileResult("x_st", 4)
    h.parse_unittest(LOG, r)
    assert (r.ran, r.passed, r.failures, r.errors, r.skipped, r.status) == (4, 1, 1, 1, 1, "ran")
    assert [(f.kind, f.test, f.reason) for f in r.failed] == [
        ("ERROR", "T.test_c", "RuntimeError: sim: boom"), ("FAIL", "T.test_b", "AssertionError: False is not true")]
    crashed = h.FileResult("y_st", 3)
    h.parse_unittest("Traceback (most recent call last):\nImportError: no module\n", crashed)
    assert crashed.status == "crashed" and "ImportError" in crashed.tail
