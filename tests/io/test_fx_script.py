"""Writing FX graphs as model scripts (airctl repro's graph form): every node spelled so it runs again."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.io.fx_script import ScriptError, ScriptNode, ScriptSpec, render, script_node, target_expr
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


def test_untrusted_text_stays_text_in_the_script() -> None:
    """A source path or an origin holding a line break, quotes or a backslash: the script still compiles,
    the text stays inside its comment or docstring, and no code of it runs."""
    import ast

    hostile = 'm.py:3\nimport os; os.system("x")  \\N{bad} """ \x1b]0;t\x07'
    node = ScriptNode("y", "operator.neg({0})", ["x"], source=hostile)
    source = render(ScriptSpec(["x"], [node], ["y"], title=hostile, origin=hostile))
    tree = ast.parse(source)  # a SyntaxError (\N{bad}, the closing quotes) or an injected statement otherwise
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "os.system"]
    doc = ast.get_docstring(tree)
    assert doc is not None and 'os.system("x")  \\N{bad} """' in doc  # the text, as it was: a docstring's
    assert "\x1b" not in source and "\x07" not in source  # no control character in the file itself
    (line,) = [ln for ln in source.splitlines() if ln.lstrip().startswith("y = ")]
    assert line.endswith("\\x07")  # the whole source on the node's own line, in its comment


def test_local_imports_are_found(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("X = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    script = tmp_path / "model.py"
    script.write_text("import torch\nimport helpers\nfrom pkg.sub import y\nfrom . import z\n")
    assert local_imports(script, script.read_bytes()) == ["helpers", "pkg", "."]
