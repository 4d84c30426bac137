"""One lifecycle for every run (pipeline/run/lifecycle.py): signals at every moment, a process that
died, the user's code ending the process or leaving threads behind. Each case runs the console
script in a fresh process, as users run it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "fixtures" / "models"
ENDS = MODELS / "ends"
CODE = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
STATUS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "terminated"}

pytestmark = pytest.mark.slow


def _env(out: Path) -> dict[str, str]:
    env = dict(os.environ, AIRCTL_OUT=str(out))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)  # as a user's shell has it: airctl sets it for itself
    return env


def _airctl(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "airctl", *map(str, args)]


def _statuses(out: Path) -> list[str]:
    return [json.loads((d / "index.json").read_text())["status"] for d in out.iterdir()
            if (d / "index.json").is_file()] if out.is_dir() else []


def _signalled(cmd: list[str], cwd: Path, out: Path, signum: int, after: float) -> tuple[int | None, str]:
    """Start ``cmd`` in its own process group, send ``signum`` to the group ``after`` seconds in; the exit
    code (None: it ended before the signal), and stderr."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=_env(out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        proc.wait(after)
        return None, proc.stderr.read().decode() if proc.stderr else ""
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signum)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"{cmd} still running 60 s after {signal.Signals(signum).name}") from None
    return proc.returncode, err.decode()


def _sweep(cmd: list[str], cwd: Path, signum: int, moments: list[float]) -> int:
    """Every moment: the command exits with the signal's code and leaves its ledger interrupted or
    terminated; or no ledger (before one exists); or it had ended. Returns how many ledgers were cut."""
    cut = 0
    for k, after in enumerate(moments):
        out = cwd / f"runs-{signal.Signals(signum).name}-{k}"
        code, err = _signalled(cmd, cwd, out, signum, after)
        statuses = _statuses(out)
        if code is None or statuses == ["ok"]:  # it finished first (the signal met the process's exit)
            assert "running" not in statuses, statuses
            continue
        # before airctl's first instruction Python's own SIGINT handling ends it (-2: a shell says 130)
        assert code == CODE[signum] or (code == -signum and not statuses), (after, code, err[-800:])
        assert all(s == STATUS[signum] for s in statuses), (after, statuses, err[-800:])
        cut += bool(statuses)
    return cut


SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


@pytest.fixture(scope="module")
def phases(tmp_path_factory: pytest.TempPathFactory) -> tuple[float, float]:
    """One whole ``airctl compile`` of slow.py left alone: when its ledger appears and when the process
    ends (seconds); the signal sweeps below share it."""
    cwd = tmp_path_factory.mktemp("warm")
    out = cwd / "runs"
    t0 = time.monotonic()
    proc = subprocess.Popen(_airctl("compile", ENDS / "slow.py"), cwd=cwd, env=_env(out),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    appeared = None
    while proc.poll() is None:
        if appeared is None and _statuses(out):
            appeared = time.monotonic() - t0
        time.sleep(0.02)
    end = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    return (appeared if appeared is not None else end / 2), end


def _moments(start: float, stop: float, n: int) -> list[float]:
    return [start + (stop - start) * k / (n - 1) for k in range(n)]


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_signal_at_every_moment_of_a_compile(tmp_path: Path, signum: int, phases: tuple[float, float]) -> None:
    """From 0.2 s on, through the imports (typer, TorchAir, the script's), the compile and the run:
    two moments before the ledger exists, four spread over its life."""
    appears, ends = phases
    moments = [0.2, appears / 2] + _moments(appears + 0.05, ends * 0.95, 4)
    cut = _sweep(_airctl("compile", ENDS / "slow.py"), tmp_path, signum, moments)
    assert cut >= 2, f"moments land while the run's ledger exists ({moments})"


@pytest.mark.parametrize("command", [
    ["passes", "apply", REPO / "passes" / "stream.yaml", "--model", MODELS / "seed.py"],
    ["run", REPO / "fixtures" / "scripts" / "record_wait.py"],
    ["profile", MODELS / "seed.py", "--steps", "2"],
    ["import", REPO / "fixtures" / "imports" / "ma_tcd"],
], ids=["passes-apply", "run", "profile", "import"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_other_run_commands(tmp_path: Path, command: list, signum: int) -> None:
    """Two moments per signal, interleaved: 0.5 s and 3 s for SIGINT, 1.5 s and 4.5 s for SIGTERM."""
    _sweep(_airctl(*command), tmp_path, signum, {signal.SIGINT: [0.5, 3.0], signal.SIGTERM: [1.5, 4.5]}[signum])


def test_sigkill_leaves_a_run_that_readers_call_died(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    subprocess.run(_airctl("compile", MODELS / "seed.py"), cwd=tmp_path, env=_env(out), capture_output=True,
                   check=True, timeout=300)
    proc = subprocess.Popen(_airctl("compile", ENDS / "slow.py"), cwd=tmp_path, env=_env(out),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while "running" not in _statuses(out) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert "running" in _statuses(out), "on disk the killed run still says running"
    runs = subprocess.run(_airctl("runs", "--json"), cwd=tmp_path, env=_env(out), capture_output=True, text=True)
    rows = json.loads(runs.stdout)["runs"]
    assert [r["status"] for r in rows] == ["died", "ok"], rows
    assert "ended without closing the run" in rows[0]["error"]
    died = rows[0]["id"]
    show = subprocess.run(_airctl("show", died), cwd=tmp_path, env=_env(out), capture_output=True, text=True)
    assert "status: died" in show.stdout, show.stdout
    current = subprocess.run(_airctl("show"), cwd=tmp_path, env=_env(out), capture_output=True, text=True)
    assert current.returncode == 0 and "status: ok" in current.stdout, current.stderr  # the pointer reads


@pytest.mark.parametrize("script, asked", [("exit_in_get_model.py", 0), ("exit_in_forward.py", 3)])
def test_os_exit_in_user_code_closes_the_run_and_names_the_script(tmp_path: Path, script: str, asked: int) -> None:
    out = tmp_path / "runs"
    proc = subprocess.run(_airctl("compile", ENDS / script), cwd=tmp_path, env=_env(out), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 4, proc.stderr
    assert f"os._exit({asked}) at {ENDS / script}:" in proc.stderr and script in proc.stderr
    (index,) = [json.loads((d / "index.json").read_text()) for d in out.iterdir() if (d / "index.json").is_file()]
    assert index["status"] == "failed" and index["error_detail"]["type"] == "ProcessExit"
    assert (out / "latest").read_text().strip() == index["run_id"]


def test_a_thread_left_running_is_named_and_does_not_hold_the_exit(tmp_path: Path) -> None:
    t0 = time.monotonic()
    proc = subprocess.run(_airctl("compile", ENDS / "leaves_thread.py"), cwd=tmp_path, env=_env(tmp_path / "r"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "left 1 thread(s) running: 'metrics-server'" in proc.stderr
    assert "_serve_forever" in proc.stderr
    assert time.monotonic() - t0 < 100


def test_a_thread_left_running_in_each_rank(tmp_path: Path) -> None:
    proc = subprocess.run(_airctl("compile", ENDS / "leaves_thread.py", "--nproc", "2"), cwd=tmp_path,
                          env=_env(tmp_path / "r"), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    logs = "".join(p.read_text(errors="replace") for p in (tmp_path / "r").rglob("*") if p.is_file()
                   and p.suffix in (".log", ".txt") or p.name in ("stderr.log",))
    assert "metrics-server" in proc.stderr + logs


def test_a_rank_stuck_in_its_own_code_is_named_not_the_one_waiting(tmp_path: Path) -> None:
    proc = subprocess.run(_airctl("compile", ENDS / "stuck_rank.py", "--nproc", "2", "--collective-timeout", "8"),
                          cwd=tmp_path, env=_env(tmp_path / "r"), capture_output=True, text=True, timeout=240)
    assert proc.returncode != 0
    assert "rank 1 was stuck in its own code (get_model at " in proc.stderr, proc.stderr[-3000:]
    assert "stuck_rank.py:" in proc.stderr


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_signal_swallowed_on_its_way_still_ends_the_run_terminated(tmp_path: Path) -> None:
    """C code that turns the interrupt into another error (an extension module's import raises
    ImportError: cannot load module more than once) must not make the run a compile failure."""
    from airctl.errors import Terminated
    from airctl.pipeline.run import signals
    from airctl.pipeline.run.lifecycle import Run

    signals.arm()
    try:
        with pytest.raises(Terminated), Run.create(tmp_path, "swallowed", command="compile") as run:
            try:
                signal.raise_signal(signal.SIGTERM)
            except BaseException as e:  # noqa: BLE001 - as C code would: a different error, then handled
                swallowed = ImportError(f"cannot load module more than once per process ({type(e).__name__})")
            assert isinstance(swallowed, ImportError)
            run.ledger.fail("TorchAir failed to compile the model: " + str(swallowed))
            run.ledger.finish("failed")
    finally:
        signals.disarm()
    (index,) = [json.loads(p.read_text()) for p in tmp_path.glob("*/index.json")]
    assert index["status"] == "terminated" and index["error_detail"]["signal"] == "SIGTERM"
