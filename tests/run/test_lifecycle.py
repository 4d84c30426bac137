"""One lifecycle for every run (pipeline/run/lifecycle.py): signals at every moment, a process that
died, the user's code ending the process or leaving threads behind. Each case runs the console
script in a process of its own, as users run it: a fresh interpreter where the moment is inside
the imports, else one forked from a warm process that imported torch and TorchAir once (tests/warm_process.py).

The signal sweeps aim at phases rather than a time grid, and send a signal into the middle of each.
The run's own phases are timed by one ``airctl compile`` left alone in a child of the warm process, from its
ledger (``timings``, every stage's ``elapsed``). The phases only a fresh interpreter has are timed
by the warm process's own warm-up, which imports the same modules in the same order; the moment inside
torch's and TorchAir's import is counted from when the run's ledger appears. SIGINT goes to every
phase (Python's own ``KeyboardInterrupt`` path, before and after airctl arms its handler), and so does
SIGTERM; SIGHUP shares SIGTERM's path once armed (:class:`~airctl.errors.Terminated`, only the name
and exit code differ): its sweep is left to ``--sweeps`` (marker ``sweep``)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from airctl.ledger.liveness import crash_report
from tests.warm_process import Child, WarmProcess, start

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "fixtures" / "models"
ENDS = MODELS / "ends"
CODE = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
STATUS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "terminated"}
PYTHON_START = 0.1  # seconds from exec to airctl's first line (0.04 to 0.05 for `python -c pass` here)

pytestmark = pytest.mark.slow


def _env(out: Path) -> dict[str, str]:
    env = dict(os.environ, AIRCTL_OUT=str(out))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)  # as a user's shell has it: airctl sets it for itself
    return env


def _indexes(out: Path) -> list[dict]:
    return [json.loads((d / "index.json").read_text()) for d in out.iterdir()
            if (d / "index.json").is_file()] if out.is_dir() else []


def _statuses(out: Path) -> list[str]:
    return [index["status"] for index in _indexes(out)]


def _run(warm_process: WarmProcess | None, args: list, cwd: Path, out: Path, timeout: float = 300) -> Child:
    """``airctl ARGS`` to its end (forked from ``warm_process``; None: a fresh interpreter)."""
    return start(warm_process, args, cwd, _env(out), cwd).finish(timeout, f"airctl {args}")


@dataclass(frozen=True)
class AfterLedger:
    """A moment ``seconds`` after the run's ledger appeared, on the process's own progress rather than
    the clock of its start."""

    seconds: float


Moment = float | AfterLedger  # a float: seconds after the start


def _ended_before(child: Child, out: Path, moment: Moment) -> bool:
    """Wait for ``moment``; True where the command ended first."""
    if isinstance(moment, AfterLedger):
        deadline = time.monotonic() + 300
        while not _statuses(out):
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(0.02)
                return True
            if time.monotonic() > deadline:
                child.finish(0, "a command whose ledger never appeared")
        moment = moment.seconds
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(moment)
        return True
    return False


def _signalled(warm_process: WarmProcess | None, args: list, cwd: Path, out: Path, signum: int,
               moment: Moment) -> tuple[int | None, str]:
    """Start ``airctl ARGS`` in its own process group (forked from ``warm_process``; None: a fresh interpreter),
    send ``signum`` to the group at ``moment``; the exit code (None: it ended before the signal), and
    stderr."""
    child = start(warm_process, args, cwd, _env(out), cwd)
    if _ended_before(child, out, moment):
        return None, child.stderr
    os.killpg(child.pid, signum)
    child.finish(60, f"{args}, sent {signal.Signals(signum).name},")
    return child.returncode, child.stderr


def _sweep(warm_process: WarmProcess | None, args: list, cwd: Path, signum: int, moments: dict[str, Moment]) -> int:
    """Every moment: the command exits with the signal's code and leaves its ledger interrupted or
    terminated; or no ledger (before one exists); or it had ended. Returns how many ledgers were cut."""
    cut = 0
    for phase, after in moments.items():
        out = cwd / f"runs-{signal.Signals(signum).name}-{phase}"
        code, err = _signalled(warm_process, args, cwd, out, signum, after)
        if code is None and isinstance(after, float) and warm_process is not None and phase != "closing":
            # the run was over before its moment (a busy machine made the timing run slower than
            # this one): the same phase once more, earlier
            after *= 0.6
            out = out.with_name(out.name + "-earlier")
            code, err = _signalled(warm_process, args, cwd, out, signum, after)
        statuses = _statuses(out)
        if code is None or statuses == ["ok"]:  # it finished first (the signal met the process's exit)
            assert "running" not in statuses, statuses
            continue
        if code == -signal.SIGABRT and "terminate called after throwing an instance of" in err:
            # the known defect (docs/reliability.md): the interrupt raised where torch's C++ cannot take
            # it (in Python code C++ calls: 'python_error'; between a dispatch mode's push and pop, which
            # the next push then finds: c10::Error "trying to set the current UNKNOWN_MODE"); the
            # process aborts and its ledger is left running, which `airctl runs`/`show` read as died.
            # Recorded, the sweep goes on over the other phases
            assert statuses == ["running"], (phase, statuses)
            crash = crash_report(next(d for d in out.iterdir() if (d / "index.json").is_file()))
            assert crash is not None and crash["error"] == "Aborted", crash  # the ledger says where it was
            ABORTED.append((signal.Signals(signum).name, phase, after, crash["where"]))
            continue
        if code == -signum and statuses and all(s == STATUS[signum] for s in statuses) and "error: " in err:
            # once the second known defect (docs/reliability.md; its cause, an interrupt CPython kept as
            # unhandled, is fixed and tested below): the run was ended and reported as it should be, then
            # the process died by the signal at exit. Recorded if met again; the other phases are checked
            ABORTED.append((signal.Signals(signum).name, phase, after))
            continue
        # before airctl's first instruction Python's own SIGINT handling ends it (-2: a shell says 130)
        assert code == CODE[signum] or (code == -signum and not statuses), (phase, after, code, err[-800:])
        assert all(s == STATUS[signum] for s in statuses), (phase, after, statuses, err[-800:])
        cut += bool(statuses)
    return cut


SIGNALS = [signal.SIGINT, signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.sweep)]
ABORTED: list[tuple] = []  # the known C++ abort, met by a sweep (see _sweep)


def _left_alone(warm_process: WarmProcess | None, cwd: Path) -> tuple[float, float, dict]:
    """One whole ``airctl compile`` of slow.py: when its ledger appeared and when the process ended
    (seconds from its start), and its index."""
    out = cwd / "runs"
    t0 = time.monotonic()
    child = start(warm_process, ["compile", ENDS / "slow.py"], cwd, _env(out), cwd)
    appeared = None
    while True:
        try:
            child.wait(0.02)
            break
        except subprocess.TimeoutExpired:
            if appeared is None and _statuses(out):
                appeared = time.monotonic() - t0
    end = time.monotonic() - t0
    assert child.returncode == 0, child.stderr[-2000:]
    (index,) = _indexes(out)
    return (appeared if appeared is not None else end / 2), end, index


@pytest.fixture(scope="module")
def fresh_moments(warm_process: WarmProcess) -> dict[str, Moment]:
    """The phases only a fresh interpreter has: Python starting (airctl not armed yet), the CLI's
    imports (armed, no ledger yet), torch's and TorchAir's import inside the run (the ledger there,
    no ``timings.backend_seconds`` yet). Timed by the warm process's own warm-up, which imports the same
    things in the same order: the CLI, then torch and TorchAir under sim."""
    imports = warm_process.imports  # timed while the workers were importing too: the third of it, to stay inside
    return {"python-starting": 0.2, "cli-imports": PYTHON_START + imports["cli"] / 2,
            "torchair-import": AfterLedger(imports["torch_and_torchair"] / 3)}


@pytest.fixture(scope="module")
def warm_moments(warm_process: WarmProcess, tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    """The phases of the run itself, from the ledger's own clock (a child of the warm process, TorchAir loaded):
    the model's load and eager run, Dynamo's trace, AOT and the FX passes, GE conversion and its
    passes, the compiled run, and closing the run (report, pointer, exit)."""
    appears, end, index = _left_alone(warm_process, tmp_path_factory.mktemp("warm"))
    t = index["timings"]
    opened = t["backend_seconds"] + t["load_seconds"] + t.get("prepare_seconds", 0.0) + t["eager_seconds"]
    elapsed = {s["name"]: s["elapsed"] for g in index["graphs"] for s in g["stages"]}
    last = max(elapsed.values())
    bounds = {"load-and-eager": (0.0, opened), "dynamo": (opened, elapsed["dynamo"]),
              "aot-and-fx-passes": (elapsed["dynamo"], elapsed["fx-final"]),
              "ge-conversion": (elapsed["fx-final"], elapsed["ge-optimized"]),
              # durations in ``timings`` count from the backend's start, stages' ``elapsed`` from the ledger's,
              # some milliseconds before: more than this small model's compiled run can take
              "compiled-run": (last, max(last, opened + t["compile_and_run_seconds"])),
              "closing": (t["total_seconds"], end - appears)}
    for phase, (a, b) in bounds.items():
        assert 0 <= a <= b, (phase, a, b, index["timings"])  # the ledger's clock says the phases in order
    return {phase: appears + (a + b) / 2 for phase, (a, b) in bounds.items()}


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_signal_at_every_phase_of_a_compile(tmp_path: Path, signum: int, warm_process: WarmProcess,
                                              fresh_moments: dict[str, Moment], warm_moments: dict[str, float]) -> None:
    """Fresh interpreters for Python's start, the CLI's imports and TorchAir's; children of the warm process for
    the run's own phases."""
    warm = warm_moments
    fresh = {phase: m for phase, m in fresh_moments.items()  # the ledger exists from TorchAir's import on
             if signum != signal.SIGHUP or not isinstance(m, AfterLedger)}
    known = len(ABORTED)
    cut = _sweep(None, ["compile", ENDS / "slow.py"], tmp_path, signum, fresh)
    if "torchair-import" in fresh:  # it landed inside the import: the run had not recorded its end yet
        landed = _indexes(tmp_path / f"runs-{signal.Signals(signum).name}-torchair-import")
        assert [i for i in landed if "backend_seconds" not in i.get("timings", {})], (fresh, landed)
    cut += _sweep(warm_process, ["compile", ENDS / "slow.py"], tmp_path, signum, warm)
    for scale in (0.6, 0.35):  # runs faster than the timing one (a host that got quieter): the phases again, earlier
        if cut >= 2:
            break
        cut += _sweep(warm_process, ["compile", ENDS / "slow.py"], tmp_path, signum,
                      {f"{phase}-x{scale}": at * scale for phase, at in warm.items() if phase != "closing"})
    assert cut >= 2, f"moments land while the run's ledger exists ({fresh_moments}, {warm})"
    _xfail_if_aborted(known)


OTHER_COMMANDS = {"passes-apply": ["passes", "apply", REPO / "passes" / "stream.yaml", "--model", MODELS / "seed.py"],
                  "run": ["run", REPO / "fixtures" / "scripts" / "record_wait.py"],
                  "profile": ["profile", MODELS / "seed.py", "--steps", "2"],
                  "import": ["import", REPO / "fixtures" / "imports" / "ma_tcd"]}


# SIGINT in every command; SIGTERM, whose path once armed is every command's same one, in passes apply (the
# others: sweeps, --sweeps)
@pytest.mark.parametrize(("signum", "command"), [
    pytest.param(signum, command, id=f"{signum.name}-{name}",
                 marks=() if signum == signal.SIGINT or name == "passes-apply" else pytest.mark.sweep)
    for signum in (signal.SIGINT, signal.SIGTERM) for name, command in OTHER_COMMANDS.items()])
def test_a_signal_during_the_other_run_commands(tmp_path: Path, command: list, signum: int,
                                                warm_process: WarmProcess) -> None:
    """In children of the warm process (the imports before a run are the compile sweep's): as the run's
    ledger appears (on the command's own progress: a moment that always meets it running), then two
    moments on the clock, 0.5 s and 2 s for SIGINT, 1 s and 3 s for SIGTERM, which a fast run may have
    outlived (``import`` takes 0.3 s in all: 0.1 s after its ledger instead)."""
    moments: dict[str, Moment] = {"ledger": AfterLedger(0.0)}
    if command[0] == "import":
        moments["ledger+0.1s"] = AfterLedger(0.1)
    else:
        moments.update({f"{m}s": m for m in {signal.SIGINT: [0.5, 2.0], signal.SIGTERM: [1.0, 3.0]}[signum]})
    known = len(ABORTED)
    cut = _sweep(warm_process, command, tmp_path, signum, moments)
    _xfail_if_aborted(known)
    assert cut >= 1, f"no moment met airctl {command[0]} running"


def _xfail_if_aborted(known: int) -> None:
    """Every other moment passed; a moment that met the known abort makes the test an expected failure."""
    if len(ABORTED) > known:
        pytest.xfail(f"a known defect at {ABORTED[known:]} (docs/reliability.md): the process aborted in torch's "
                     "C++, or died by the signal at its exit after ending the run")


def test_sigkill_leaves_a_run_that_readers_call_died(tmp_path: Path, warm_process: WarmProcess) -> None:
    out = tmp_path / "runs"
    assert _run(warm_process, ["compile", MODELS / "seed.py"], tmp_path, out).returncode == 0
    child = start(warm_process, ["compile", ENDS / "slow.py"], tmp_path, _env(out), tmp_path)
    deadline = time.monotonic() + 120
    while "running" not in _statuses(out) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(child.pid, signal.SIGKILL)
    assert child.wait(60) == -signal.SIGKILL
    assert "running" in _statuses(out), "on disk the killed run still says running"
    runs = _run(warm_process, ["runs", "--json"], tmp_path, out)
    rows = json.loads(runs.stdout)["runs"]
    assert [r["status"] for r in rows] == ["died", "ok"], rows
    assert "ended without closing the run" in rows[0]["error"]
    died = rows[0]["id"]
    show = _run(warm_process, ["show", died], tmp_path, out)
    assert "status: died" in show.stdout, show.stdout
    current = _run(warm_process, ["show"], tmp_path, out)
    assert current.returncode == 0 and "status: ok" in current.stdout, current.stderr  # the pointer reads


def test_a_native_crash_leaves_its_stack_in_the_ledger_and_readers_name_the_users_frame(
        tmp_path: Path, warm_process: WarmProcess) -> None:
    """A segfault cannot be caught: the ledger keeps faulthandler's report (crash.txt), and `runs` and
    `show` say the run crashed, with the signal, the innermost frame and the user's own frame."""
    out = tmp_path / "runs"
    proc = _run(warm_process, ["compile", ENDS / "crash_in_forward.py"], tmp_path, out)
    assert proc.returncode == -signal.SIGSEGV, proc.stderr[-2000:]
    (ledger,) = [d for d in out.iterdir() if (d / "index.json").is_file()]
    assert "Fatal Python error: Segmentation fault" in (ledger / "crash.txt").read_text()
    rows = json.loads(_run(warm_process, ["runs", "--json"], tmp_path, out).stdout)["runs"]
    assert [r["status"] for r in rows] == ["died"], rows
    error = rows[0]["error"]
    assert "crashed before any stage was captured: Segmentation fault in string_at at " in error, error
    assert f"called from forward at {ENDS / 'crash_in_forward.py'}:9" in error and "crash.txt" in error, error
    show = _run(warm_process, ["show"], tmp_path, out)
    assert "status: died" in show.stdout and "crash_in_forward.py:9" in show.stderr + show.stdout, show.stderr
    ok = _run(warm_process, ["compile", MODELS / "seed.py"], tmp_path, out)
    assert ok.returncode == 0 and not list(out.glob("*seed*/crash.txt")), ok.stderr[-2000:]  # empty: removed


@pytest.mark.parametrize("script, asked", [("exit_in_get_model.py", 0), ("exit_in_forward.py", 3)])
def test_os_exit_in_user_code_closes_the_run_and_names_the_script(tmp_path: Path, script: str, asked: int,
                                                                  warm_process: WarmProcess) -> None:
    out = tmp_path / "runs"
    proc = _run(warm_process, ["compile", ENDS / script], tmp_path, out)
    assert proc.returncode == 4, proc.stderr
    assert f"os._exit({asked}) at {ENDS / script}:" in proc.stderr and script in proc.stderr
    (index,) = _indexes(out)
    assert index["status"] == "failed" and index["error_detail"]["type"] == "ProcessExit"
    assert (out / "latest").read_text().strip() == index["run_id"]


def test_a_thread_left_running_is_named_and_does_not_hold_the_exit(tmp_path: Path, warm_process: WarmProcess) -> None:
    t0 = time.monotonic()
    proc = _run(warm_process, ["compile", ENDS / "leaves_thread.py"], tmp_path, tmp_path / "r", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "left 1 thread(s) running: 'metrics-server'" in proc.stderr
    assert "_serve_forever" in proc.stderr
    assert time.monotonic() - t0 < 100


def test_a_thread_left_running_in_each_rank(tmp_path: Path, warm_process: WarmProcess) -> None:
    proc = _run(warm_process, ["compile", ENDS / "leaves_thread.py", "--nproc", "2"], tmp_path, tmp_path / "r",
                timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    logs = "".join(p.read_text(errors="replace") for p in (tmp_path / "r").rglob("*") if p.is_file()
                   and p.suffix in (".log", ".txt") or p.name in ("stderr.log",))
    assert "metrics-server" in proc.stderr + logs


def test_a_rank_stuck_in_its_own_code_is_named_not_the_one_waiting(tmp_path: Path, warm_process: WarmProcess) -> None:
    proc = _run(warm_process, ["compile", ENDS / "stuck_rank.py", "--nproc", "2", "--collective-timeout", "4"],
                tmp_path,
                tmp_path / "r", timeout=240)
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
            run.fail("TorchAir failed to compile the model: " + str(swallowed))
    finally:
        signals.disarm()
    (index,) = [json.loads(p.read_text()) for p in tmp_path.glob("*/index.json")]
    assert index["status"] == "terminated" and index["error_detail"]["signal"] == "SIGTERM"


def test_disarm_keeps_the_handler_that_drops_a_redelivery_still_on_its_way() -> None:
    """A redelivery sent just before the interrupt was seen can land after the command is over: the
    default handler would raise it at exit (the process then dies by SIGINT, not exit 130)."""
    from airctl.pipeline.run import signals

    before = signal.getsignal(signal.SIGINT)
    try:
        signals.arm()
        signals.disarm()  # nothing in flight: the handlers are given back
        assert signal.getsignal(signal.SIGINT) is before
        redelivery = signals.arm()
        assert redelivery is not None
        with redelivery._lock:
            redelivery.resent = True  # as _again leaves it when its signal has not been handled yet
        signals.disarm()
        assert signal.getsignal(signal.SIGINT) == redelivery.handler
        signal.raise_signal(signal.SIGINT)  # the stale redelivery lands: dropped, no KeyboardInterrupt
        assert redelivery.resent is False
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_redelivery_landing_just_after_a_block_ends_is_dropped_not_raised_in_the_caller() -> None:
    """redelivered() (airctl as a library, a test): a redelivery sent just before the block ended
    lands a moment later. Handed to Python's default handler, it was a KeyboardInterrupt somewhere in
    the caller's code after the compile had returned (met in an in-process sweep of Ctrl-C moments)."""
    from airctl.pipeline.run import signals

    before = signal.getsignal(signal.SIGINT)
    late = threading.Timer(0.02, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
    try:
        with signals.redelivered() as redelivery:
            with redelivery._lock:
                redelivery.resent = True  # as _again leaves it: sent, not landed yet
            late.start()
        time.sleep(0.2)  # a KeyboardInterrupt here is the bug
        assert redelivery.resent is False
        assert signal.getsignal(signal.SIGINT) in (before, redelivery.handler)  # the latter: it landed late
    finally:
        late.join()
        signal.signal(signal.SIGINT, before)


def test_the_process_ends_after_the_atexit_handlers_and_flushed_streams(tmp_path: Path,
                                                                        warm_process: WarmProcess) -> None:
    """The console script skips the interpreter's teardown (boundary.end_process), not what a program
    is owed at exit: atexit handlers (the user's too) and everything written to stdout/stderr."""
    script = tmp_path / "at_exit.py"
    script.write_text("import atexit, sys\n"
                      "marker = sys.argv[1]\n"
                      "atexit.register(lambda: open(marker, 'w').write('ran'))\n"
                      "sys.kept = open(marker + '.open', 'w')  # never closed: Python's teardown flushes it\n"
                      "sys.kept.write('written, never closed')\n"
                      "sys.stdout.write('x' * 100000)  # left in the buffer, no newline, no flush\n")
    proc = _run(warm_process, ["run", script, tmp_path / "marker.txt"], tmp_path, tmp_path / "r", timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "marker.txt").read_text() == "ran"
    assert (tmp_path / "marker.txt.open").read_text() == "written, never closed"
    assert "x" * 100000 in proc.stdout
