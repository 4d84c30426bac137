"""Writing FX graphs as model scripts (airctl repro's graph form): every node spelled so it runs again."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.io.fx_script import ScriptError, ScriptSpec, render, script_node, target_expr
from airctl.pipeline.bisect.repro_files import local_imports


def test_targets_are_named_as_a_script_imports_them() -> None:
    import operator

    import torch

    assert target_expr(torch.mm) == "torch.mm"  # not torch._VariableFunctionsClass.mm
    assert target_expr(operator.add) == "operator.add"
    assert target_expr(torch.ops.aten.mm.default) == "torch.ops.aten.mm.default"
    assert target_expr(torch.nn.functional.relu) == "torch.nn.functional.relu"
    with pytest.raises(ScriptError, match="cannot import"):
        target_expr(test_targets_are_named_as_a_script_imports_them)


def test_a_traced_graph_written_as_a_script_computes_the_same(tmp_path: Path) -> None:
    import torch

    def f(x, w):
        y = torch.mm(x, w).to(torch.float32).view(2, 8)
        return torch.sum(y, dim=[1], keepdim=True) + x.new_ones(1)[0], torch.nn.functional.pad(y, (1, 1))

    gm = torch.fx.symbolic_trace(f)
    names = {n: n.name for n in gm.graph.nodes}
    nodes = [script_node(n, names) for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    out = next(n for n in gm.graph.nodes if n.op == "output").all_input_nodes
    source = render(ScriptSpec(["x", "w"], nodes, [n.name for n in out]))
    namespace: dict = {"__file__": str(tmp_path / "model.py")}
    exec(compile(source, "model.py", "exec"), namespace)  # noqa: S102 - the script we just wrote
    x, w = torch.randn(4, 4), torch.randn(4, 4)
    ours, theirs = namespace["Graph"]()(x, w), f(x, w)
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs, strict=True))


def test_local_imports_are_found(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("X = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    script = tmp_path / "model.py"
    script.write_text("import torch\nimport helpers\nfrom pkg.sub import y\nfrom . import z\n")
    assert local_imports(script) == ["helpers", "pkg", "."]
