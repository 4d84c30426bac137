"""Who broke it: the user's script, the user's plugin, TorchAir or airctl — each named as such (issue 18)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import airctl
from airctl.cli.app import build_app
from tests.conftest import BAD, MODELS, REPO

runner = CliRunner()


def compile_cli(tmp_path: Path, *args: object):  # noqa: ANN201
    r = runner.invoke(build_app(), ["compile", *map(str, args), "--out", str(tmp_path), "--backend", "sim"])
    ledgers = [p for p in tmp_path.iterdir() if p.is_dir()]
    index = json.loads((ledgers[0] / "index.json").read_text()) if len(ledgers) == 1 else None
    return r, index


def test_sys_exit_in_get_model_is_the_scripts(tmp_path: Path) -> None:
    r, index = compile_cli(tmp_path, BAD / "exits_in_get_model.py")
    assert r.exit_code == 4, r.output
    assert "exits_in_get_model.py:7: error: get_model() called sys.exit(0)" in r.stderr
    assert "TorchAir" not in r.stderr.split("hint:")[0] and "Traceback" not in r.stderr
    assert index["status"] == "failed" and index["error_detail"]["type"] == "UserCodeError"


def test_get_model_returning_a_string_is_bad_input(tmp_path: Path) -> None:
    r, index = compile_cli(tmp_path, BAD / "model_is_a_string.py")
    assert r.exit_code == 2 and "gave a str, not a model" in r.stderr
    assert index["status"] == "failed"


def test_a_raising_forward_is_the_scripts_with_its_own_frames(tmp_path: Path) -> None:
    r, index = compile_cli(tmp_path, BAD / "forward_raises.py")
    assert r.exit_code == 4, r.output
    assert "forward_raises.py:8: error: the model, run eagerly before any compile, raised ValueError: my forward is " \
           "broken" in r.stderr
    hint = r.stderr.split("hint:", 1)[1]
    assert 'forward_raises.py", line 8, in forward' in hint
    package = str(Path(airctl.__file__).parent) + "/"  # not the word "airctl": a clone may be in a folder of that name
    assert "site-packages" not in hint and package not in hint  # the user's frames only


def test_inputs_that_compile_nothing_fail_instead_of_passing(tmp_path: Path) -> None:
    r, index = compile_cli(tmp_path, BAD / "inputs_not_tensors.py")
    assert r.exit_code == 2 and "nothing was compiled" in r.stderr and "gave int" in r.stderr
    assert index["status"] == "failed" and index["graphs"] == []


def test_a_plugin_calling_sys_exit_is_the_plugins(tmp_path: Path) -> None:
    plugin = REPO / "fixtures" / "passes" / "exiting_plugin.yaml"
    r, index = compile_cli(tmp_path, MODELS / "seed.py", "--passes", plugin)
    assert r.exit_code == 3, r.output
    assert "pass `leaves` (python plugin plugins.py:leaves) called sys.exit(7)" in r.stderr
    assert "TorchAir failed" not in r.stderr
    assert "site-packages" not in r.stderr  # TorchAir's wrapper appends its own traceback: the original is shown
    assert any(s["name"] == "failed:yaml:leaves" for g in index["graphs"] for s in g["stages"])


def test_a_plugin_that_never_returns_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    passes = tmp_path / "spin.yaml"
    passes.write_text(f"version: 1\ntimeout: 600\npasses:\n  - name: spins\n    kind: python\n"
                      f"    plugin: {REPO / 'fixtures' / 'passes' / 'plugins.py'}:spins\n    timeout: 0.5\n")
    r, index = compile_cli(tmp_path / "out", MODELS / "seed.py", "--passes", passes)
    assert r.exit_code == 3, r.output
    assert "spin.yaml:7:14: error: pass `spins` (python plugin" in r.stderr
    assert "ran past its time limit of 0.5 s (stopped at" in r.stderr and "plugins.py:" in r.stderr
    assert "set `timeout:` on `spins`" in r.stderr and "site-packages" not in r.stderr
    assert index["status"] == "failed"  # the graph the plugin was given is kept
    assert any(s["name"] == "failed:yaml:spins" for g in index["graphs"] for s in g["stages"])


def test_invalid_tolerances_fail_before_compiling(tmp_path: Path) -> None:
    for atol in ("nan", "-1", "inf"):
        r, index = compile_cli(tmp_path / atol, MODELS / "seed.py", "--atol", atol)
        assert r.exit_code == 2 and "invalid --atol" in r.stderr, (atol, r.output)
        assert index["graphs"] == [] and "backend_seconds" not in index["timings"]


def test_json_stdout_is_only_json_when_the_script_prints(tmp_path: Path) -> None:
    r, _ = compile_cli(tmp_path, BAD / "prints.py", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["status"] == "ok"
    assert "hello from the model script" in r.stderr and "forward prints too" in r.stderr
