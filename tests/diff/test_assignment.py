"""``airctl show --assignment`` on compiled runs, in every mode (compiles: slow): fixtures/models/
two_chains.py with fixtures/passes/super_kernel/left_super_kernel.yaml, which puts the left chain
(``mm`` .. ``mm_9``) in the super kernel scope ``sk_left``. GE converts each matmul to a MatMul op;
aclgraph and npugraph_ex capture them as kernels (npugraph_ex records its capture's graph key)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.pipeline.show import assignment

pytestmark = pytest.mark.slow
MODES = ["max-autotune", "reduce-overhead", "npugraph_ex"]
PASSES = "fixtures/passes/super_kernel/left_super_kernel.yaml"


@pytest.mark.parametrize("mode", MODES)
def test_assignment_in_every_mode(compile_fixture, mode: str) -> None:
    result = compile_fixture("two_chains", mode, PASSES)
    table = assignment(result.ledger_dir)
    (graph,) = table["graphs"]
    rows = {r["node"]: r for r in graph["nodes"]}
    left, right = [f"mm_{k}" if k else "mm" for k in range(10)], [f"mm_{k}" for k in range(10, 20)]
    assert [rows[n]["super_kernel"] for n in left] == ["sk_left"] * 10
    assert {rows[n]["super_kernel"] for n in [*right, "add"]} == {None}
    assert rows["scope_enter_default"]["category"] == rows["scope_exit_default"]["category"] == "scope"
    assert sum(graph["totals"].values()) == len(graph["nodes"]) == len(rows)
    if mode == "max-autotune":
        assert rows["mm_3"]["category"] == "converted" and rows["mm_3"]["ge_ops"] == [["MatMul_3", "MatMul"]]
        assert rows["add"]["ge_ops"] == [["Add", "Add"]]
        assert graph["totals"]["converted"] == 21 and graph["captured"] is None
        assert table["compile_stat"]["status"] == "absent" and "under sim" in table["compile_stat"]["note"]
        assert {r["static_kernel"] for r in graph["nodes"]} == {None}
    else:
        assert rows["mm_3"]["category"] == "captured" and rows["mm_3"]["ge_ops"] == []
        assert graph["totals"]["captured"] == 21 and rows["mm_3"]["static_kernel"] is False
        assert table["compile_stat"]["status"] == "not applicable"
        # npugraph_ex records each capture's graph key; reduce-overhead under sim runs eagerly
        assert graph["captured"] == (["no_updated_input"] if mode == "npugraph_ex" else [])
    # the command: --json carries the table, the text names the scope and the totals
    runner = CliRunner()
    r = runner.invoke(build_app(), ["show", str(result.ledger_dir), "--assignment", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["totals"] == table["totals"]
    r = runner.invoke(build_app(), ["show", str(result.ledger_dir), "--assignment"])
    assert r.exit_code == 0, r.output
    kind = "converted" if mode == "max-autotune" else "captured"
    assert "super kernel sk_left" in r.stdout and f"totals: {kind} 21" in r.stdout
