"""A reproducer pins what the model needs beyond torch, imports it in the graph form, and run.sh checks it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from airctl.pipeline.bisect import repro_requirements as rq


def test_outside_modules_are_the_scripts_imports_and_custom_op_namespaces(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("X = 1\n")
    script = tmp_path / "model.py"
    script.write_text("import os\nimport torch\nimport yaml\nfrom helper import X\nfrom airctl import errors\n")
    found = rq.outside_modules(script, script.read_bytes())
    assert list(found) == ["yaml"]  # not the stdlib, torch, airctl, nor a file beside the script
    assert found["yaml"]["distribution"].lower() == "pyyaml" and found["yaml"]["version"]


def test_graph_ops_of_an_installed_library_bring_their_module(tmp_path: Path) -> None:
    import torch

    script = tmp_path / "model.py"
    script.write_text("import torch\n")
    gm = torch.fx.symbolic_trace(torch.nn.ReLU())
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    node.target = torch.ops.aten.relu.default  # aten: torch's own, nothing to install
    assert rq.outside_modules(script, script.read_bytes(), [(gm, ())]) == {}
    import yaml  # noqa: F401 - loaded, as a library whose ops a graph calls is

    lib = torch.library.Library("yaml", "FRAGMENT")  # an op in the namespace of an installed library
    try:
        lib.define("airctl_twice(Tensor x) -> Tensor")
        node.target = torch.ops.yaml.airctl_twice.default
        found = rq.outside_modules(script, script.read_bytes(), [(gm, ())])
    finally:
        lib._destroy()
    assert list(found) == ["yaml"] and found["yaml"]["distribution"].lower() == "pyyaml"
    assert "registers torch.ops.yaml.airctl_twice" in found["yaml"]["why"] and found["yaml"]["imports"] == ["yaml"]


def test_requirements_and_graph_form_imports(tmp_path: Path) -> None:
    modules = {"transformers": {"distribution": "transformers", "version": "5.24.0", "why": "imported by the script",
                                "imports": ["transformers.integrations.moe"]}}
    rq.write_requirements(tmp_path, modules)
    text = (tmp_path / "requirements.txt").read_text()
    assert "transformers==5.24.0" in text and "torch==" in text
    model = tmp_path / "model.py"
    model.write_text('"""doc"""\n\nimport torch\nfrom safetensors.torch import load_file\n')
    rq.add_imports(model, modules)
    assert "import torch\nimport transformers.integrations.moe  # noqa: F401 - registers torch.ops.transformers" \
        in model.read_text()


def test_run_sh_checks_with_the_python_of_airctl(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("pyyaml\n")
    script = "set -u\ncd \"$(dirname \"$0\")\"\n" + rq.CHECK_SH + "echo \"ran with $PY\"\n"
    (tmp_path / "run.sh").write_text(script)
    r = subprocess.run(["bash", str(tmp_path / "run.sh")], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "AIRCTL": f"{sys.executable} -m airctl"})
    assert r.returncode == 0 and f"ran with {sys.executable}" in r.stdout, r.stderr


def test_run_sh_check_says_what_to_install(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("# pins\nno-such-distribution-airctl==1.0  # nope\npyyaml\n")
    script = "set -u\ncd \"$(dirname \"$0\")\"\nAIRCTL=false\n" + rq.CHECK_SH + "echo ran\n"
    (tmp_path / "run.sh").write_text(script)
    r = subprocess.run(["bash", str(tmp_path / "run.sh")], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable})
    assert r.returncode == 2 and "ran" not in r.stdout
    assert "not installed: no-such-distribution-airctl==1.0" in r.stderr
    assert "pip install -r requirements.txt" in r.stderr
    (tmp_path / "requirements.txt").write_text("pyyaml\n")
    r = subprocess.run(["bash", str(tmp_path / "run.sh")], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable})
    assert r.returncode == 0 and "ran" in r.stdout
