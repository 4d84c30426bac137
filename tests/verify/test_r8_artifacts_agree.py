"""One R8 (``wait_on_const``) verdict for one compile's TorchAir DEBUG log, GE ``.txt`` and ``.pbtxt``
(issue 62, item 1 and acceptance 1).

A wait's control edge lands, in GE, on the first op TorchAir converts after it; an op with a literal
argument starts with a helper ``Const``. The log is checked on its FX listing (the wait before an op
with literal arguments), the dumps on the GE graph (a ``Const`` with a control input): before the
fix they disagreed on a wait whose op also reads the awaited stream's value (log 0 findings, dumps 1
warning). Both cases come from real max-autotune compiles under sim with a pass file, and each
artifact is read by ``airctl check`` as a user would read the files TorchAir wrote.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

# mm and abs on stream_1, then a record; the default stream waits before mul(x, 2), which reads
# nothing of stream_1: GE's Const(2) gets the control edge, and nothing else orders mul after abs
MODEL = '''
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        mm = torch.mm(x, x)
        abs_ = torch.abs(mm)
        scaled = torch.mul(x, 2)
        return torch.add(abs_, scaled)


def get_model():
    return Model().npu()


def get_inputs():
    torch.manual_seed(0)
    return (torch.randn([3, 3]).npu(),)
'''
PLAN = '''
version: 1
description: mm..abs on stream_1 with a record; the default stream waits before mul(x, 2)
passes:
  - name: mm-abs-on-stream1
    kind: stream_scope
    stream: stream_1
    range: {from: {target: aten.mm.default}, to: {target: aten.abs.default}}
    record: true
  - name: mul-waits
    kind: wait
    before: {target: aten.mul.Tensor}
    on: mm-abs-on-stream1
'''


def _compile(model: Path, plan: Path, out: Path) -> Path:
    r = runner.invoke(build_app(), ["compile", str(model), "--mode", "max-autotune", "--passes", str(plan),
                                    "--backend", "sim", "--out", str(out)])
    assert r.exit_code == 0, r.output
    (ledger,) = [p for p in out.iterdir() if p.is_dir()]
    return ledger


def _artifacts(ledger: Path) -> dict[str, Path]:
    """TorchAir's DEBUG log (the ledger keeps it as log.txt.gz) and its dumps of the optimized GE graph."""
    (txt,) = ledger.glob("torchair/dynamo_optimized_graph_*.txt.gz")
    (pbtxt,) = ledger.glob("torchair/dynamo_optimized_graph_*.pbtxt.gz")
    return {"log": ledger / "log.txt.gz", "txt": txt, "pbtxt": pbtxt}


def _verdicts(ledger: Path) -> dict[str, Counter[str]]:
    out = {}
    for kind, path in _artifacts(ledger).items():
        r = runner.invoke(build_app(), ["check", str(path), "--json"])
        assert r.exit_code in (0, 1), (kind, r.output)
        out[kind] = Counter(f["rule"] for f in json.loads(r.stdout)["findings"])
    return out


def _const_with_control_input(dump: Path) -> bool:
    """Whether the GE dump holds the shape R8 reads: a Const whose input is a control edge (``Abs:-1``)."""
    text = gzip.decompress(dump.read_bytes()).decode()
    return any('type: "Const"' in op and ':-1"' in op for op in text.split("\nop {"))


def test_a_wait_before_an_op_with_a_literal_argument_is_one_r8_warning_in_the_log_txt_and_pbtxt(
        tmp_path: Path) -> None:
    (tmp_path / "const_wait.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "wait_on_const.yaml").write_text(PLAN, encoding="utf-8")
    ledger = _compile(tmp_path / "const_wait.py", tmp_path / "wait_on_const.yaml", tmp_path / "runs")
    assert _const_with_control_input(_artifacts(ledger)["txt"])
    verdicts = _verdicts(ledger)
    assert verdicts == {kind: Counter({"wait_on_const": 1}) for kind in ("log", "txt", "pbtxt")}, verdicts


def test_a_wait_whose_op_reads_the_awaited_streams_value_is_no_finding_in_any_of_them(tmp_path: Path) -> None:
    """The case the artifacts disagreed on: seed's wait before ``add(abs, 1)``. GE's Const(1) still gets
    the control edge, but ``add`` reads ``abs`` from stream_1, a data edge GE synchronises itself."""
    ledger = _compile(ROOT / "fixtures" / "models" / "seed.py", ROOT / "fixtures" / "passes" / "ordered_wait.yaml",
                      tmp_path / "runs")
    artifacts = _artifacts(ledger)
    assert _const_with_control_input(artifacts["txt"])  # R8's GE-side shape is there: the rule must look further
    verdicts = _verdicts(ledger)
    assert verdicts == {kind: Counter() for kind in ("log", "txt", "pbtxt")}, verdicts
