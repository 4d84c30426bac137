"""Warm commands (docs/warm.md) as users run them: the console script hands the command to the warm
process (airctl.cli.warm), which forks it. Faithful: its ledger equals a cold one's in every mode;
invisible: ``--json`` output, exit codes, Ctrl-C and SIGTERM as cold; safe: a changed install is
served by a new warm process, ``AIRCTL_WARM=0`` and ``--cold`` turn it off, ``airctl doctor`` shows it.

The session's warm process (tests/warm_process.py) is the product's: the console reaches it when
``AIRCTL_WARM_DIR`` names its folder. Whether a command was served warm is read from the warm
process's own count of forked commands (its state file)."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from airctl.pipeline.warm import daemon, place
from tests.conftest import MODELS, REPO
from tests.warm_process import WarmProcess


@pytest.fixture(scope="module")
def warm_process() -> WarmProcess:
    """This module's own warm process: its tests count forks, and the session's serves every worker."""
    return WarmProcess.private("test-warm")

VOLATILE = {"run_id", "created", "process", "timings", "timing_ends", "elapsed", "seconds", "seq", "log",
            "command_line", "started", "ended", "duration_s", "wall_s"}


def console(args: list, cwd: Path, env: dict[str, str], **popen: object) -> subprocess.Popen:
    """``python -m airctl ARGS`` as a shell starts it: a process group of its own."""
    return subprocess.Popen([sys.executable, "-m", "airctl", *map(str, args)], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **popen)


def warm_env(folder: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "AIRCTL_WARM": "1", "AIRCTL_WARM_DIR": str(folder), **more}


def forked(warm: WarmProcess) -> int:
    return int((place.state(warm.folder, warm.key) or {}).get("forked", 0))


def _normal(value: object) -> object:
    """A ledger's JSON without what differs between any two runs (moments, durations, pids)."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"pid_\d+_ts_\d+", "pid_ts", re.sub(r"\d{8}-\d{6}-[\w-]+-[0-9a-f]{4}", "RUN", value))
    return value


def _sorted_items(match: re.Match) -> bytes:
    """A list TorchAir's log prints from a set (``added nodes: [...]``), in one order."""
    return b"[" + b", ".join(sorted(match.group(1).split(b", "))) + b"]"


def ledger(out: Path) -> dict[str, object]:
    """One run's ledger under ``out`` as comparable data: its index, and every file's normalised content."""
    (index_file,) = out.glob("*/index.json")
    root = index_file.parent
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = re.sub(r"pid_\d+_ts_\d+", "pid_ts", str(path.relative_to(root)))
        if path.suffix in (".log", ".html") or path.name == "index.json" or "incremental" in path.parts:
            continue  # logs and the report carry moments; the index is compared as data; the kept
            # pre-pass graph (docs/incremental.md) carries the process's object ids, as Dynamo wrote them
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        if "log" in path.name:  # the same lines; their moments and addresses aside, and the order of
            # a table TorchAir prints from a set (Python's hash seed differs between any two processes)
            text = re.sub(rb"^[\d-]+ [\d:.,]+ |0x[0-9a-f]+|\d+", b"N", data, flags=re.M)
            files[name] = sorted(re.sub(rb"\[([^\[\]]*)\]", _sorted_items, line) for line in text.splitlines())
            continue
        try:
            files[name] = _normal(json.loads(data))
        except ValueError:  # GE's text dumps: the same lines (a protobuf map's order follows the hash seed)
            files[name] = sorted(re.sub(rb"pid_\d+_ts_\d+|\d{8}-\d{6}-[\w-]+-[0-9a-f]{4}", b"X", data).splitlines())
    return {"index": _normal(json.loads(index_file.read_text())), "files": files}


QWEN3_MODES = ("max-autotune", "npugraph_ex")


@pytest.mark.parametrize("command, mode", [
    (["compile", MODELS / "seed.py"], "max-autotune"),
    # seed in the aclgraph modes: sweeps (--sweeps); the pass file and Qwen3 below run those modes in the suite
    pytest.param(["compile", MODELS / "seed.py"], "reduce-overhead", marks=pytest.mark.sweep),
    pytest.param(["compile", MODELS / "seed.py"], "npugraph_ex", marks=pytest.mark.sweep),
    (["passes", "apply", REPO / "passes" / "two_chains.yaml", "--model", MODELS / "two_chains.py"], "reduce-overhead"),
    # the modules imported ahead for a transformers model (airctl.sim.preload): TorchAir's GE path and the
    # npugraph_ex package (reduce-overhead's aclgraph path is seed's above); its GE path, which seed's
    # max-autotune case takes too, is a sweep (--sweeps)
    *[(["compile", MODELS / "transformers" / "qwen3.py"], mode) if mode != "max-autotune" else
      pytest.param(["compile", MODELS / "transformers" / "qwen3.py"], mode, marks=pytest.mark.sweep)
      for mode in QWEN3_MODES],
], ids=["seed-max-autotune", "seed-reduce-overhead", "seed-npugraph_ex", "two-chains-passes-apply",
        *[f"qwen3-{mode}" for mode in QWEN3_MODES]])
def test_a_warm_commands_ledger_equals_a_cold_ones(tmp_path: Path, warm_process: WarmProcess, command: list,
                                                   mode: str) -> None:
    """The same stages, nodes, findings, dumps and files, timings and moments aside. The tiny
    transformers Qwen3 meets what the warm process imported and cached ahead (airctl.sim.preload)."""
    if "transformers" in str(command[1]):
        pytest.importorskip("transformers")
    ledgers = {}
    small = {"AIRCTL_TWO_CHAINS_N": "64", "AIRCTL_TWO_CHAINS_DEPTH": "4"}  # two_chains.py, smaller: a quicker compile
    for side, env in (("cold", {**os.environ, "AIRCTL_WARM": "0", **small}),
                      ("warm", warm_env(warm_process.folder, **small))):
        before = forked(warm_process)
        proc = console([*command, "--mode", mode, "--backend", "sim", "--out", tmp_path / side], tmp_path, env)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        assert forked(warm_process) - before == (side == "warm"), side
        ledgers[side] = ledger(tmp_path / side)
    cold, warm = ledgers["cold"], ledgers["warm"]
    assert sorted(cold["files"]) == sorted(warm["files"])  # the same stages and dumps
    for name in cold["files"]:
        assert cold["files"][name] == warm["files"][name], name
    assert cold["index"] == warm["index"]  # stages, nodes, findings, dumps, passes


# cold: a sweep (--sweeps); the suite checks --json of a command in a process of its own in tests/cli/test_json.py
@pytest.mark.parametrize("side", ["warm", pytest.param("cold", marks=pytest.mark.sweep)])
def test_json_is_the_ledgers_index_and_nothing_else(tmp_path: Path, warm_process: WarmProcess, side: str) -> None:
    env = warm_env(warm_process.folder, **({"AIRCTL_WARM": "0"} if side == "cold" else {}))
    before = forked(warm_process)
    proc = console(["compile", MODELS / "seed.py", "--backend", "sim", "--json", "--out", tmp_path / "runs"],
                   tmp_path, env)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    index = json.loads(out)  # the whole of stdout
    assert index["status"] == "ok" and index == json.loads(next((tmp_path / "runs").glob("*/index.json")).read_text())
    assert forked(warm_process) - before == (side == "warm")
    assert err == "" if side == "warm" else True  # nothing of the warm process's own reaches the caller


# SIGTERM to a cold command: a sweep (--sweeps); Ctrl-C keeps the cold side in the suite, and
# tests/run/test_lifecycle.py sends SIGTERM to fresh interpreters in their imports and to commands at every phase
@pytest.mark.parametrize("signum, code, status, side", [
    pytest.param(signum, code, status, side, id=f"{name}-{side}",
                 marks=pytest.mark.sweep if (name, side) == ("sigterm", "cold") else ())
    for name, signum, code, status in (("ctrl-c", signal.SIGINT, 130, "interrupted"),
                                       ("sigterm", signal.SIGTERM, 143, "terminated"))
    for side in ("warm", "cold")])
def test_a_signal_to_the_command_ends_its_run_as_cold(tmp_path: Path, warm_process: WarmProcess, side: str,
                                                      signum: int, code: int, status: str) -> None:
    """The signal goes to the console's process group, as a terminal's Ctrl-C or ``kill`` does: warm,
    the client forwards it to the forked command."""
    env = warm_env(warm_process.folder, **({"AIRCTL_WARM": "0"} if side == "cold" else {}))
    out = tmp_path / "runs"
    proc = console(["compile", MODELS / "ends" / "slow_to_load.py", "--backend", "sim", "--out", out], tmp_path, env)
    deadline = time.monotonic() + 240
    while not list(out.glob("*/index.json")):  # the run has begun
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(0.5)
    os.killpg(proc.pid, signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err[-3000:]
    (index,) = [json.loads(p.read_text()) for p in out.glob("*/index.json")]
    assert index["status"] == status


def test_warm_is_off_with_the_variable_or_the_flag_and_doctor_says_which(tmp_path: Path,
                                                                        warm_process: WarmProcess) -> None:
    before = forked(warm_process)
    for env, flag in ((warm_env(warm_process.folder), ["--cold"]),
                      (warm_env(warm_process.folder, AIRCTL_WARM="0"), [])):
        proc = console([*flag, "passes", "list"], tmp_path, env)  # a command the warm process serves
        assert proc.communicate(timeout=120) and proc.returncode == 0
    assert forked(warm_process) == before
    proc = console(["passes", "list"], tmp_path, warm_env(warm_process.folder))  # neither: served warm
    assert proc.communicate(timeout=120) and proc.returncode == 0
    assert forked(warm_process) == before + 1
    proc = console(["doctor", "--json"], tmp_path, warm_env(warm_process.folder))
    out, err = proc.communicate(timeout=120)
    warm = json.loads(out)["warm"]
    assert (warm["enabled"], warm["status"], warm["key"]) == (True, "serving", warm_process.key), warm
    proc = console(["doctor", "--json"], tmp_path, warm_env(warm_process.folder, AIRCTL_WARM="0"))
    assert json.loads(proc.communicate(timeout=120)[0])["warm"]["enabled"] is False


@pytest.mark.slow
def test_a_changed_install_is_served_by_a_new_warm_process(tmp_path: Path) -> None:
    """A package installed into a folder on the path (here: a file written into a ``PYTHONPATH``
    folder, as ``pip install`` changes site-packages) changes the key: the old warm process ends,
    starting the new install's, which serves the next command."""
    folder, installed = tmp_path / "w", tmp_path / "site"
    installed.mkdir()
    env = warm_env(folder, AIRCTL_WARM_OWNER=str(os.getpid()),
                   PYTHONPATH=os.pathsep.join([str(REPO), str(installed)]))
    args = ["compile", MODELS / "seed.py", "--backend", "sim", "--out", tmp_path / "runs"]
    proc = console(args, tmp_path, env)  # cold: starts the warm process
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    old = place.key(env)
    first = _serving(folder, old)
    args = ["passes", "list"]  # from now on: any command the warm process serves
    proc = console(args, tmp_path, env)
    proc.communicate(timeout=300)
    assert proc.returncode == 0 and place.state(folder, old)["forked"] == 1
    (installed / "new_package.py").write_text("")
    new = place.key(env)
    assert new != old
    second = _serving(folder, new)
    assert second["pid"] != first["pid"]
    deadline = time.monotonic() + 60
    while daemon.alive(folder, old):  # the old one has gone
        assert time.monotonic() < deadline
        time.sleep(0.1)
    proc = console(args, tmp_path, env)
    proc.communicate(timeout=300)
    assert proc.returncode == 0 and place.state(folder, new)["forked"] == 1
    os.kill(second["pid"], signal.SIGTERM)


def _serving(folder: Path, key: str) -> dict:
    deadline = time.monotonic() + 300
    while (place.state(folder, key) or {}).get("status") != "serving":
        assert time.monotonic() < deadline, place.state(folder, key)
        time.sleep(0.1)
    return place.state(folder, key) or {}


def test_doctor_stop_warm_ends_the_users_warm_process_and_says_so(tmp_path: Path) -> None:
    stopping = WarmProcess.private("stop")
    pid = (place.state(stopping.folder, stopping.key) or {}).get("pid")
    assert isinstance(pid, int)
    proc = console(["doctor", "--stop-warm", "--json"], tmp_path, warm_env(stopping.folder))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out) == {"stopped": [{"key": stopping.key, "pid": pid, "ended": True,
                                            "install": place.install_id()}], "left": []}
    cmdline = Path(f"/proc/{pid}/cmdline")  # gone; or its memory already released (a zombie of this test process)
    assert not cmdline.exists() or cmdline.read_bytes() == b""
    proc = console(["doctor", "--stop-warm"], tmp_path, warm_env(stopping.folder))
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.startswith("no warm process of this install running")
