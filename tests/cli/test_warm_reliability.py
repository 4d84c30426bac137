"""The warm process end to end, reproductions of issue 62.17 and 63.3 (slow: each starts a warm process).

- 62.17: ``airctl doctor --stop-warm`` while a command ran: the caller exited 1 ("went away"), the
  command ran on orphaned and wrote an ok ledger. Now the command ends as terminated (143), its
  caller says so, its ledger agrees, and nothing is left running;
- 63.3: an edit inside a package the warm process had imported (a folder on ``PYTHONPATH``, as an
  editable checkout is) went unseen for up to 15 minutes. Now the next command runs cold and sees it.

Both need the install's key to hold during the test: an edit to airctl's own files meanwhile (a
developer's, another checkout's tool) sends every command cold, and the first then fails.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from airctl.pipeline.warm import daemon, place
from tests.cli.test_warm import console, warm_env
from tests.conftest import MODELS


def _started(folder: Path, env: dict[str, str]) -> tuple[str, int]:
    key = place.key(env)
    daemon.spawn("airctl.cli.warm", folder, key, env)
    deadline = time.monotonic() + 300
    while (place.state(folder, key) or {}).get("status") != "serving":
        assert time.monotonic() < deadline, place.state(folder, key)
        time.sleep(0.1)
    return key, int((place.state(folder, key) or {})["pid"])


def _gone(pid: int) -> bool:
    cmdline = Path(f"/proc/{pid}/cmdline")
    return not cmdline.exists() or cmdline.read_bytes() == b""


@pytest.mark.slow
def test_stop_warm_during_a_command_ends_it_with_its_caller(tmp_path: Path) -> None:
    folder = place.private(tmp_path / "w")
    assert folder is not None
    env = warm_env(folder, **{daemon.OWNER_ENV: str(os.getpid())})
    _key, server = _started(folder, env)
    out = tmp_path / "runs"
    proc = console(["compile", MODELS / "ends" / "slow_to_load.py", "--backend", "sim", "--out", out], tmp_path, env)
    deadline = time.monotonic() + 240
    while not list(out.glob("*/index.json")):  # the run has begun, in a child of the warm process
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    (index_file,) = out.glob("*/index.json")
    command = json.loads(index_file.read_text()).get("process", {}).get("pid")
    served = place.state(folder, _key) or {}
    assert served.get("forked") == 1, f"the command ran cold (airctl's files changed meanwhile?): {served}"
    stop = console(["doctor", "--stop-warm", "--json"], tmp_path, env)
    said, _ = stop.communicate(timeout=120)
    assert stop.returncode == 0 and json.loads(said)["stopped"][0]["ended"] is True
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-3000:]
    assert "went away" not in err
    assert json.loads(index_file.read_text())["status"] == "terminated"
    assert _gone(server)
    if isinstance(command, int):
        assert _gone(command)


@pytest.mark.slow
def test_an_edit_to_a_package_the_warm_process_imported_is_seen_by_the_next_command(tmp_path: Path) -> None:
    site = tmp_path / "checkout"
    (site / "edited_pkg").mkdir(parents=True)
    module = site / "edited_pkg" / "__init__.py"
    module.write_text("VALUE = 1\n")
    (site / "sitecustomize.py").write_text("import edited_pkg  # noqa: F401 - imported at start, as torch is\n")
    model = tmp_path / "model.py"
    model.write_text("import sys\nimport edited_pkg\nprint('edited_pkg.VALUE', edited_pkg.VALUE, file=sys.stderr)\n"
                     + (MODELS / "seed.py").read_text())
    folder = place.private(tmp_path / "w")
    assert folder is not None
    env = warm_env(folder, **{daemon.OWNER_ENV: str(os.getpid()),
                              "PYTHONPATH": os.pathsep.join([str(site), str(Path(__file__).resolve().parents[2])])})
    key, server = _started(folder, env)
    args = ["compile", model, "--backend", "sim", "--out", tmp_path / "runs"]
    proc = console(args, tmp_path, env)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and (place.state(folder, key) or {}).get("forked") == 1, err[-2000:]
    assert "edited_pkg.VALUE 1" in err
    stamp = module.stat().st_mtime_ns
    module.write_text("VALUE = 2\n")  # the same size: only its time tells
    os.utime(module, ns=(stamp + 10**9, stamp + 10**9))
    proc = console(args, tmp_path, env)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "edited_pkg.VALUE 2" in err, err[-2000:]
    deadline = time.monotonic() + 60
    while not _gone(server):  # the warm process saw the edit and ended
        assert time.monotonic() < deadline
        time.sleep(0.1)
