"""Multi-rank runs: torchrun's agent inside airctl, every rank running airctl's pipeline.

>>> launcher_argv("torchrun", ["--nproc-per-node", "2", "ddp.py"])
['--nproc-per-node', '2', 'ddp.py']
>>> launcher_argv("python", ["-m", "torch.distributed.run", "--nproc-per-node=2", "ddp.py"])
['--nproc-per-node=2', 'ddp.py']
>>> launcher_argv("ddp.py", []) is None
True

``airctl run torchrun [OPTIONS] SCRIPT.py ARGS`` (or ``python -m torch.distributed.run ...``),
``airctl compile MODEL.py --nproc N`` and ``airctl profile MODEL.py --nproc N`` come here. The
command line is parsed by torchrun itself (``torch.distributed.run.parse_args``), so every
torchrun option keeps its meaning, and then rewritten into torchrun's documented ``--no-python``
form: each worker runs ``python -u -m airctl.pipeline.ranks.worker LEDGER``
(:mod:`~airctl.pipeline.ranks.worker`), which reads ``LEDGER/ranks/request.json`` and writes
``LEDGER/ranks/<rank>/``. The agent runs in this process (``torch.distributed.run.run``), so
airctl is still there when the workers end, to write the top ledger
(:mod:`~airctl.pipeline.ranks.status`). Unless the command line says otherwise, torchrun is also
told to tee each worker's console into ``LEDGER/logs/`` and to give stopping workers 5 s
(``--shutdown-timeout``) before it kills them. A :class:`~airctl.pipeline.ranks.watchdog.Watchdog`
stops ranks that hang in a collective.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import airctl
from airctl.errors import AirctlError, ModelScriptError, Terminated
from airctl.ledger.index import RankEntry, RunIndex
from airctl.limits import NPROC_MAX, NPROC_PER_CPU, nproc_limit
from airctl.pipeline.ranks import forks
from airctl.pipeline.ranks.orphans import sweep_leftovers
from airctl.pipeline.ranks.status import Failure, divergence, rank_backend, rank_entries, rank_numbers, run_status
from airctl.pipeline.ranks.watchdog import Watchdog
from airctl.pipeline.ranks.worker import REQUEST_FILE, RankRequest
from airctl.pipeline.run import signals
from airctl.pipeline.run.lifecycle import Run
from airctl.pipeline.target import Progress
from airctl.torch_env import ensure_torch_importable, restored_environ

LAUNCHER_MODULE = "torch.distributed.run"
WORKER_MODULE = "airctl.pipeline.ranks.worker"
SHUTDOWN_TIMEOUT_S = 5
WATCHDOG_GRACE_S = 30.0  # the watchdog fires this long after the collective timeout


def launcher_argv(script: str, args: Sequence[str]) -> list[str] | None:
    """torchrun's own arguments when ``script ARGS`` is a torchrun command line, else None."""
    name = Path(script).name
    if name == "torchrun":
        return list(args)
    if name.startswith("python") and list(args[:2]) == ["-m", LAUNCHER_MODULE]:
        return list(args[2:])
    if script == "-m" and list(args[:1]) == [LAUNCHER_MODULE]:
        return list(args[1:])
    if Path(script).as_posix().endswith("torch/distributed/run.py"):
        return list(args)
    return None


@dataclass
class RanksRequest:
    """A multi-rank run: torchrun's arguments (``argv``, the script and its arguments included)
    and what every rank does (``rank``)."""

    argv: list[str]
    rank: RankRequest
    out_dir: Path = Path("airctl-runs")
    watchdog_s: float | None = None  # None: the collective timeout + 30 s; 0: off
    command: str = "run"  # the top ledger's command


@dataclass
class RanksResult:
    ledger_dir: Path
    index: RunIndex
    ranks: list[RankEntry]
    divergence: list[dict[str, Any]] = field(default_factory=list)
    watchdog: str | None = None
    error: AirctlError | None = None

    @property
    def exit_code(self) -> int:
        """airctl's error's code; else, like torchrun, 1 when a rank failed (its own code when it
        exited with one); 3 when every rank ran but a compiled graph differs from eager; else 0."""
        if self.error is not None:
            return int(self.error.exit_code)
        failed = [r for r in self.ranks if r.status not in ("ok", "mismatch")]
        if self.watchdog or failed:
            return next((r.exit_code for r in failed if r.exit_code and 0 < r.exit_code < 128), 1)
        return 3 if any(r.status == "mismatch" for r in self.ranks) else 0


def nproc_argv(nproc: int, script: Path) -> list[str]:
    """torchrun's arguments for ``airctl compile/profile --nproc N`` (one node, a free port)."""
    if nproc < 1:
        raise AirctlError(f"invalid --nproc {nproc}", hint="give the number of ranks, e.g. --nproc 2")
    check_nproc(nproc, "--nproc")
    return ["--nproc-per-node", str(nproc), str(script)]


def check_nproc(nproc: int, option: str) -> None:
    """AirctlError when ``nproc`` ranks are more than this machine runs (:func:`airctl.limits.nproc_limit`:
    each rank is a process that imports torch; 1,000 of them on 2 cores never finish starting)."""
    limit = nproc_limit()
    if nproc > limit:
        raise AirctlError(f"invalid {option} {nproc}: at most {limit} ranks on this machine",
                          hint=f"airctl runs at most {NPROC_PER_CPU} ranks per usable CPU core "
                               f"(and never over {NPROC_MAX}); docs/multi-rank.md")


def run_ranks(req: RanksRequest, progress: Progress | None = None) -> RanksResult:
    """Launch the ranks, wait for them, write the top ledger; see the module docstring."""
    say = progress or (lambda _msg: None)
    ensure_torch_importable()  # workers inherit it; torchrun itself imports torch
    from torch.distributed import run as torchrun
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    args = _parse(torchrun, req.argv)
    script = Path(args.training_script)
    _check_script(script, args)
    req.rank.target = replace(req.rank.target, model_path=script)
    req.rank.args = list(args.training_script_args)
    nproc = torchrun.determine_local_world_size(args.nproc_per_node)
    check_nproc(nproc, "--nproc-per-node")
    sweep_leftovers(Path(req.out_dir))  # ranks a killed launcher left running in this --out
    with Run.create(
        Path(req.out_dir).absolute(), script.stem, command=req.command, mode=req.rank.target.mode,
        model={"path": str(script), "argv": [str(script), *req.rank.args]}, log=None,
        launcher={"name": "torchrun", "argv": list(req.argv), "nproc_per_node": args.nproc_per_node,
                  "nnodes": args.nnodes, "collective_timeout_s": req.rank.collective_timeout_s},
        world_size=nproc, ranks=[]) as run:
        ledger = run.ledger
        top = ledger.root
        (top / "ranks").mkdir()
        (top / "ranks" / REQUEST_FILE).write_text(json.dumps(req.rank.to_json(), indent=1), encoding="utf-8")
        server, started = forks.start(top, str(req.rank.target.backend))  # before the watchdog's thread
        ledger.set(launcher={**(ledger.run_index.launcher or {}), "ranks_started": started,
                             **({"fork_server_pid": server.pid} if server else {})})
        _rewrite(args, req.argv, top, server)
        timeout = req.rank.collective_timeout_s or 0
        limit = req.watchdog_s if req.watchdog_s is not None else timeout + WATCHDOG_GRACE_S
        say(f"ledger {top}: {args.nproc_per_node} rank(s) of {script} under torchrun")
        failures: dict[int, Failure] = {}
        t0 = time.perf_counter()
        parents = {os.getpid(), *([server.pid] if server else [])}
        ours = signals.armed()  # torchrun's agent puts its own handlers in while it runs
        with _worker_env(), server or contextlib.nullcontext(), Watchdog(top, limit, say, parents=parents) as watchdog:
            try:
                torchrun.run(args)
            except ChildFailedError as e:
                failures = {int(r): Failure.of(f) for r, f in e.failures.items()}
            except SignalException as e:  # torchrun's own handler, in place while the agent runs
                stop = _as_interrupt(e.sigval)
                _finish(run, nproc, failures, stop.status, stopped=True, status=stop.status)
                raise stop.error from None
            except KeyboardInterrupt as stop:
                how = "terminated" if isinstance(stop, Terminated) else "interrupted"
                _finish(run, nproc, failures, how, stopped=True, status=how)
                raise
            except Exception as e:  # noqa: BLE001 - the launcher's own failure (rendezvous, bad option)
                error = AirctlError(f"torchrun failed: {type(e).__name__}: {e}".splitlines()[0],
                                    hint="the ranks' consoles are under logs/ in the ledger")
                entries = _finish(run, nproc, failures, error.message, stopped=True)
                return RanksResult(top, ledger.run_index, entries, error=error)
            finally:
                if ours:
                    signals.arm()
        ledger.set_timing("ranks_seconds", time.perf_counter() - t0)
        entries = _finish(run, nproc, failures, watchdog.fired, stopped=watchdog.fired is not None)
        return RanksResult(top, ledger.run_index, entries, list(ledger.run_index.divergence or []), watchdog.fired)


@dataclass
class _Stop:
    error: KeyboardInterrupt
    status: str


def _as_interrupt(signum: int) -> _Stop:
    """The interrupt airctl raises for a signal torchrun's handler caught: SIGINT ends the run
    ``interrupted`` (130), SIGTERM/SIGHUP ``terminated`` (143/129), as everywhere else."""
    if signum == signal.SIGINT:
        return _Stop(KeyboardInterrupt(), "interrupted")
    return _Stop(Terminated(int(signum), signal.Signals(signum).name), "terminated")


def _parse(torchrun: Any, argv: list[str]) -> Any:
    parser = torchrun.get_args_parser()  # what torchrun.parse_args uses, named for airctl's users
    parser.prog = "airctl run torchrun"
    try:
        return parser.parse_args(argv)
    except SystemExit as e:  # argparse printed the usage and the problem
        raise AirctlError("torchrun could not parse its arguments (see above)",
                          hint="airctl run torchrun [torchrun options] SCRIPT.py [script arguments]") from e


def _check_script(script: Path, args: Any) -> None:
    if args.module or args.no_python or args.run_path:
        raise AirctlError("airctl runs a Python script under torchrun: -m, --no-python and --run-path are not "
                          "supported", hint="give the script's path: airctl run torchrun --nproc-per-node 2 train.py")
    if not script.is_file():
        raise ModelScriptError(f"script not found: {script}", file=str(script),
                               hint="airctl run torchrun [torchrun options] SCRIPT.py [script arguments]")


def _given(argv: Sequence[str], *names: str) -> bool:
    return any(a == n or a.startswith(n + "=") for a in argv for n in names)


def _rewrite(args: Any, argv: Sequence[str], top: Path, server: forks.Forks | None) -> None:
    """Workers run airctl's rank worker (torchrun's ``--no-python`` form), or its stand-in when the
    ranks are forked (:mod:`~airctl.pipeline.ranks.forks`); logs into the ledger."""
    args.no_python, args.run_path, args.module = True, False, False
    args.training_script = sys.executable
    args.training_script_args = server.worker_argv(top) if server else ["-u", "-m", WORKER_MODULE, str(top)]
    if args.log_dir is None:
        args.log_dir = str(top / "logs")
        if not _given(argv, "--tee", "-t", "--redirects", "-r"):
            args.tee = "3"  # both streams, to the console and to logs/
    if args.shutdown_timeout is None and not _given(argv, "--shutdown-timeout", "--shutdown_timeout"):
        args.shutdown_timeout = SHUTDOWN_TIMEOUT_S


@contextlib.contextmanager
def _worker_env() -> Iterator[None]:
    """Workers import this airctl (PYTHONPATH); torchrun's own changes (OMP_NUM_THREADS) are undone."""
    with restored_environ("PYTHONPATH", "OMP_NUM_THREADS") as saved:
        here = str(Path(airctl.__file__).resolve().parent.parent)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [here, saved["PYTHONPATH"]]))
        yield


def _finish(run: Run, nproc: int, failures: dict[int, Failure], stop: str | None,
            stopped: bool, status: str | None = None) -> list[RankEntry]:
    """End the top ledger: its rank entries, divergence, status and error (``stop``: why airctl
    stopped the run)."""
    ledger = run.ledger
    ranks = rank_numbers(ledger.root, failures) or list(range(nproc))
    entries = rank_entries(ledger.root, ranks, failures, stopped)
    ledger.set(ranks=[e.to_json() for e in entries], divergence=divergence(ledger.root, ranks),
               backend=rank_backend(ledger.root, entries))
    verdict, error = run_status(entries, stop)
    if error is not None:
        run.fail(error, {"type": "RanksFailed", "ranks": {str(e.rank): e.status for e in entries}},
                 status=status or verdict)
    else:
        run.finish(status or verdict)
    return entries
