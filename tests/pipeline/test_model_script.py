"""Model-script conventions (design.md "Model scripts")."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.errors import ModelScriptError
from airctl.pipeline.run.model_script import load_model_script


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "m.py"
    path.write_text(body)
    return path


def test_get_model_and_get_inputs(tmp_path: Path) -> None:
    body = "def get_model():\n    return abs\ndef get_inputs():\n    return (-2,)\n"
    loaded = load_model_script(_write(tmp_path, body))
    assert loaded.found_by == "get_model() + get_inputs()"
    assert loaded.call(loaded.model) == 2


def test_module_level_model_and_inputs(tmp_path: Path) -> None:
    loaded = load_model_script(_write(tmp_path, "model = abs\ninputs = [-3]\n"))
    assert loaded.found_by == "model + inputs" and loaded.call(loaded.model) == 3


def test_entry_returning_pair_and_entry_pair(tmp_path: Path) -> None:
    body = "def build():\n    return abs, (-4,)\ndef m():\n    return abs\ndef i():\n    return {'x': -1}\n"
    path = _write(tmp_path, body)
    assert load_model_script(path, "build").call(abs) == 4
    loaded = load_model_script(path, "m,i")
    assert loaded.inputs == {"x": -1}


def test_step_function_drives_the_run(tmp_path: Path) -> None:
    loaded = load_model_script(_write(tmp_path, "model = abs\ninputs = (-5,)\ndef step(m, x):\n    return m(x) * 10\n"))
    assert loaded.call(loaded.model) == 50


def test_main_block_does_not_run(tmp_path: Path) -> None:
    path = _write(tmp_path, "model = abs\ninputs = (1,)\nif __name__ == '__main__':\n    raise SystemExit(9)\n")
    assert load_model_script(path).model is abs


def test_syntax_error_has_line(tmp_path: Path) -> None:
    with pytest.raises(ModelScriptError) as info:
        load_model_script(_write(tmp_path, "def f(:\n"))
    assert info.value.line == 1 and "syntax error" in info.value.message


def test_get_inputs_raising_shows_user_traceback(tmp_path: Path) -> None:
    path = _write(tmp_path, "def get_model():\n    return abs\ndef get_inputs():\n    return 1 / 0\n")
    with pytest.raises(ModelScriptError) as info:
        load_model_script(path)
    assert "ZeroDivisionError" in info.value.message and "return 1 / 0" in info.value.hint


def test_a_script_named_by_a_relative_path_raising_is_named_with_its_line_and_only_its_frames(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from airctl.errors import UserCodeError

    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "raises.py").write_text("import os\nraise ValueError('boom at import')\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserCodeError) as info:
        load_model_script(Path("bad/raises.py"))
    assert info.value.line == 2 and info.value.file == str(tmp_path / "bad" / "raises.py")
    assert "model_script.py" not in info.value.hint and "importlib" not in info.value.hint, info.value.hint


def test_a_scripts_module_keeps_the_bytes_it_ran_from(tmp_path: Path) -> None:
    """What the ledger's model hash and the incremental key digest, whatever the file holds since."""
    import os

    from airctl.pipeline.run.model_script import ran_from

    path = _write(tmp_path, "model = abs\ninputs = (1,)\n")
    loaded = load_model_script(path)
    path.write_text("model = abs\ninputs = (2,)\n")
    assert ran_from(loaded.module) == b"model = abs\ninputs = (1,)\n" and ran_from(os) is None
