"""Where a warm process lives and which install it belongs to (airctl.pipeline.warm.place), and the
console's ``--cold`` flag (airctl.cli.warm): no torch, no process."""

from __future__ import annotations

import os
from pathlib import Path

from airctl.cli.warm import warmable, without_flag
from airctl.pipeline.warm import place


def test_only_variables_read_at_start_need_another_warm_process() -> None:
    base = {"PATH": "/bin", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    assert place.differs({**base, "TORCH_COMPILE_DEBUG": "1"}, base) == ["TORCH_COMPILE_DEBUG"]
    assert place.differs({**base, "TORCHDYNAMO_VERBOSE": "1"}, base) == ["TORCHDYNAMO_VERBOSE"]
    assert place.differs({**base, "PYTHONHASHSEED": "0", "LANG": "C"}, base) == ["LANG", "PYTHONHASHSEED"]
    # a repro's run.sh names its interpreter PYTHON, a name Python itself never reads
    assert place.differs({**base, "PYTHON": "/usr/bin/python3"}, base) == []
    # torch sets its cache folder in the test process on first use and reads it only then
    assert place.differs({**base, "TORCHINDUCTOR_CACHE_DIR": "/tmp/torchinductor_x"}, base) == []
    assert place.differs({**base, "AIRCTL_OUT": "/tmp/runs", "PATH": "/usr/bin", "AIRCTL_WARM": "0"}, base) == []


def test_the_key_follows_the_environment_read_at_start_and_the_folders_on_the_path(tmp_path: Path) -> None:
    base = {"PATH": "/bin", "PYTHONPATH": str(tmp_path)}
    assert place.key(base) == place.key({**base, "AIRCTL_OUT": "x", "PYTHONPATH": f"{tmp_path}{os.pathsep}{tmp_path}"})
    assert place.key(base) != place.key({**base, "TORCH_LOGS": "+dynamo"})
    before = place.key(base)
    os.utime(tmp_path, ns=(1, 1))  # a package installed into a folder on the path changes its time
    assert place.key(base) != before


def test_a_folder_is_used_only_when_it_is_this_users_alone(tmp_path: Path) -> None:
    assert place.private(tmp_path / "warm") == tmp_path / "warm"
    assert (tmp_path / "warm").stat().st_mode & 0o777 == 0o700
    open_to_all = tmp_path / "open"
    open_to_all.mkdir(mode=0o755)
    open_to_all.chmod(0o755)
    assert place.private(open_to_all) is None
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "warm")
    assert place.private(link) is None
    assert place.private(tmp_path / "missing", make=False) is None


def test_the_folder_is_the_users_choice_else_the_runtime_folder() -> None:
    assert place.folder({"AIRCTL_WARM_DIR": "/x/y"}) == Path("/x/y")
    assert place.folder({"XDG_RUNTIME_DIR": "/nonexistent-runtime"}).name == f"airctl-warm-{os.getuid()}"


def test_cold_is_a_global_option_before_the_command() -> None:
    assert without_flag(["--cold", "compile", "m.py"]) == (["compile", "m.py"], True)
    assert without_flag(["--traceback", "--cold", "compile"]) == (["--traceback", "compile"], True)
    assert without_flag(["run", "script.py", "--cold"]) == (["run", "script.py", "--cold"], False)  # the script's


def test_only_commands_that_import_torch_are_handed_to_the_warm_process() -> None:
    assert warmable(["compile", "m.py"]) and warmable(["passes", "apply", "s.yaml"]) and warmable(["profile"])
    assert warmable(["check", "model.py"]) and not warmable(["check", "--out", "runs"])
    assert not warmable(["runs"]) and not warmable(["compile", "--help"]) and not warmable(["doctor"])
