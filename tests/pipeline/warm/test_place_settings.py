"""The warm process's settings, folder and key, reproductions of issue 63 (3, 10, 11, 12) and 62.18.

- 63.10: ``AIRCTL_WARM_IDLE=abc`` crashed the warm process into its log; every command then ran cold,
  silently. It is now refused where it is read, said once, and warm commands are off;
- 63.12: a relative ``AIRCTL_WARM_DIR`` made a stray folder wherever a command ran;
- 63.11: for a refused (non-private) folder ``doctor`` said the next command "starts one";
- 63.3: the key saw no edit inside a package already imported: the warm process notes every file
  it imported and finds one that changed;
- 62.18: ``--stop-warm`` stopped every install's warm process; now this install's (``--all``: all).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airctl.cli import warm
from airctl.pipeline.warm import daemon, place


@pytest.mark.parametrize("value", ["abc", "-5", "0", "nan", "inf"])
def test_a_bad_idle_time_turns_warm_off_with_the_reason(value: str) -> None:
    env = {"AIRCTL_WARM_IDLE": value}
    (problem,) = place.problems(env)
    assert "AIRCTL_WARM_IDLE" in problem and value in problem and "seconds" in problem
    assert not warm.enabled(env)
    with pytest.raises(ValueError):
        place.idle_seconds(env)


def test_a_good_idle_time_is_read() -> None:
    assert place.idle_seconds({"AIRCTL_WARM_IDLE": " 30 "}) == 30.0
    assert place.idle_seconds({}) == place.IDLE_S
    assert place.problems({"AIRCTL_WARM_IDLE": "30", "AIRCTL_WARM_DIR": "/tmp/x"}) == []


def test_a_relative_warm_folder_is_refused_and_never_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"AIRCTL_WARM_DIR": "warm-here"}
    assert "not an absolute path" in place.problems(env)[0]
    assert not warm.enabled(env)
    assert place.private(place.folder(env)) is None
    assert not (tmp_path / "warm-here").exists()


def test_doctor_tells_the_truth_about_a_refused_folder(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    about = place.describe({"AIRCTL_WARM_DIR": str(shared)}, enabled=True)
    assert about["enabled"] is False and about["folder_ok"] is False
    assert "refused" in str(about["status"]) and "open to others" in str(about["status"])
    assert "starts one" not in str(about["status"])
    bad = place.describe({"AIRCTL_WARM_DIR": str(shared), "AIRCTL_WARM_IDLE": "abc"}, enabled=True)
    assert str(bad["status"]).startswith("off: AIRCTL_WARM_IDLE")


def test_a_bad_setting_is_said_on_stderr_where_a_warm_process_would_start() -> None:
    code = ("import sys, torch; from airctl.cli import warm; warm.after_cold(['compile', 'm.py'])")
    env = {**os.environ, "AIRCTL_WARM_IDLE": "abc", "AIRCTL_WARM": "1", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "warm commands are off: AIRCTL_WARM_IDLE='abc'" in done.stderr


def test_an_edit_to_an_imported_file_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "editable_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import editable_pkg  # noqa: F401 - imported as the warm process imports its packages

    noted = place.imported_files()
    assert str(pkg / "__init__.py") in noted
    assert place.first_changed(noted) is None
    stamp = os.stat(pkg / "__init__.py").st_mtime_ns
    (pkg / "__init__.py").write_text("VALUE = 2\n")  # same size: only the time tells
    os.utime(pkg / "__init__.py", ns=(stamp + 1_000_000, stamp + 1_000_000))
    assert place.first_changed(noted) == str(pkg / "__init__.py")
    monkeypatch.setattr(warm, "_IMPORTED", noted)
    assert "editable_pkg/__init__.py changed" in (warm.stale() or "")
    sys.modules.pop("editable_pkg", None)


def _sleeper(where: Path, key: str, install: str) -> subprocess.Popen:
    """A process that looks like a warm process (its command line, its lock and state)."""
    code = ("import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('ready', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(where / f"{key}.lock"), "airctl.cli.warm"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    (where / f"{key}.json").write_text(json.dumps({"pid": proc.pid, "install": install, "status": "serving"}))
    return proc


def test_stop_warm_stops_this_installs_process_and_all_only_when_asked(tmp_path: Path) -> None:
    where = tmp_path / "w"
    where.mkdir(mode=0o700)
    mine, theirs = _sleeper(where, "a" * 20, place.install_id()), _sleeper(where, "b" * 20, "/other/python|/other")
    try:
        rows = daemon.stop_all(where, wait_s=5)
        assert [(r["pid"], r["ended"], r.get("skipped", False)) for r in rows] == [
            (mine.pid, True, False), (theirs.pid, False, True)]
        assert theirs.poll() is None
        rows = daemon.stop_all(where, wait_s=5, every=True)
        assert [(r["pid"], r["ended"]) for r in rows] == [(theirs.pid, True)]
    finally:
        for proc in (mine, theirs):
            proc.kill()
            proc.wait()


def test_a_command_never_waits_for_a_warm_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """62.19: a command started while the first warm process still warmed up waited for it (slower than
    cold). Here a socket that listens and never answers, its state ``warming``: the command runs cold
    at once."""
    import socket
    import threading

    where = tmp_path / "w"
    where.mkdir(mode=0o700)
    monkeypatch.setenv("AIRCTL_WARM_DIR", str(where))
    monkeypatch.setenv("AIRCTL_WARM", "1")
    key = place.key(dict(os.environ))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(place.files(where, key)["sock"]))
    listener.listen(8)
    place.write_state(where, key, status="warming", pid=os.getpid())
    answer: list[object] = []
    worker = threading.Thread(target=lambda: answer.append(warm.served(["compile", "model.py"])), daemon=True)
    worker.start()
    worker.join(5)
    listener.close()
    assert answer == [None]
