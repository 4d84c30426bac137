"""One rank of a multi-rank run: ``python -m airctl.pipeline.ranks.worker LEDGER`` under torchrun.

:mod:`airctl.pipeline.ranks.launch` runs torchrun's agent inside airctl and has it start this module
(torchrun's ``--no-python`` form) instead of ``python SCRIPT.py``. Every worker reads what to do
from ``LEDGER/ranks/request.json`` (written by the launcher: the command, its
:class:`~airctl.pipeline.target.Target` — the script and airctl's options — and the script's
arguments) and runs airctl's ordinary pipeline on exactly that target for its rank, into its own
ledger ``LEDGER/ranks/<RANK>/``:

- ``run``: :func:`~airctl.pipeline.script.runner.run_script` on the user's script, unmodified;
- ``compile`` / ``profile``: the process group first (``init_process_group``: gloo under sim,
  HCCL on an NPU), then :func:`~airctl.pipeline.compile.compiler.compile_model` or
  :func:`~airctl.pipeline.profile.profile_model`.

Each rank keeps a collective log (:mod:`airctl.ledger.collectives`) and, under sim, gives its
process groups the run's default timeout, so a divergence fails within seconds. SIGTERM (torchrun
stopping the ranks once one failed, or airctl's watchdog) raises ``KeyboardInterrupt`` here, so
the rank's ledger ends ``interrupted`` with what it captured.

A restarted rank (``--max-restarts``) keeps the latest attempt in ``ranks/<RANK>`` and moves the
earlier one to ``ranks/<RANK>.attempt-<n>``.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import interrupt_exit_code
from airctl.escape import printable
from airctl.limits import COLLECTIVE_TIMEOUT_S
from airctl.pipeline.ranks.orphans import die_with_parent
from airctl.pipeline.run import signals
from airctl.pipeline.run.boundary import exit_leaving_threads
from airctl.pipeline.run.frame_stack import call_roomy
from airctl.pipeline.run.rank import RankRun
from airctl.pipeline.target import Target

REQUEST_FILE = "request.json"


@dataclass
class RankRequest:
    """What every rank of a run does (``ranks/request.json``): the command and its target, read back
    whole by each rank (:meth:`Target.from_json`), never rebuilt from loose fields."""

    command: str  # run, compile, profile
    target: Target  # the script (model_path) and every setting the command line gave
    args: list[str] = field(default_factory=list)  # run: the script's arguments
    check: bool = True  # run: each compiled graph against its Dynamo graph run eagerly
    collective_timeout_s: float | None = COLLECTIVE_TIMEOUT_S
    steps: int = 5  # profile
    warmup: int = 1  # profile

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "target": self.target.to_json(), "args": list(self.args),
                "check": self.check, "collective_timeout_s": self.collective_timeout_s, "steps": self.steps,
                "warmup": self.warmup}

    @classmethod
    def read(cls, path: Path) -> RankRequest:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(**{**data, "target": Target.from_json(data["target"])})


@dataclass(frozen=True)
class Rank:
    """This process's place in the run, from torchrun's environment."""

    rank: int
    world_size: int
    local_rank: int
    restart_count: int

    @classmethod
    def from_env(cls) -> Rank:
        env = os.environ
        return cls(int(env["RANK"]), int(env["WORLD_SIZE"]), int(env.get("LOCAL_RANK", env["RANK"])),
                   int(env.get("TORCHELASTIC_RESTART_COUNT", "0")))


def rank_folder(ledger: Path, rank: Rank) -> Path:
    """``ranks/<rank>``; an earlier attempt found there is moved aside first."""
    root = ledger / "ranks" / str(rank.rank)
    if root.exists() and any(root.iterdir()):
        root.rename(root.with_name(f"{rank.rank}.attempt-{max(rank.restart_count - 1, 0)}"))
    return root


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m airctl.pipeline.ranks.worker LEDGER  (started by airctl's launcher)", file=sys.stderr)
        return 2
    die_with_parent(os.getppid())  # the launcher (or the fork server) killed: this rank ends with it
    ledger = Path(argv[0])
    request = RankRequest.read(ledger / "ranks" / REQUEST_FILE)
    rank = Rank.from_env()
    signals.arm()  # SIGTERM (torchrun stopping the ranks once one failed): the rank's run ends terminated
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the watchdog asks for every thread's stack
    root = rank_folder(ledger, rank)
    from airctl.ledger.collectives import LOG_FILE, CollectiveLog

    log = CollectiveLog(root / LOG_FILE)

    def say(message: str) -> None:
        print(f"airctl[rank {rank.rank}]: {printable(message)}", file=sys.stderr, flush=True)  # node names, paths

    place = RankRun(root, {**asdict(rank), "pid": os.getpid()}, log, request.collective_timeout_s)
    try:
        work = _run if request.command == "run" else _compile
        return call_roomy(work, request, place, say)  # as a command does: one roomy frame-stack block
    except KeyboardInterrupt as stop:
        say(f"{stop or 'interrupted'} (torchrun stops every rank once one failed)")
        return interrupt_exit_code(stop)
    finally:
        log.close()


def _run(request: RankRequest, place: RankRun, say: Any) -> int:
    from airctl.pipeline.script.errors import show
    from airctl.pipeline.script.runner import RunRequest, run_script

    result = run_script(RunRequest(request.target, args=list(request.args), check=request.check, rank=place),
                        progress=say)
    if result.end.failed:
        show(result.end)  # the traceback Python would print, in this rank's console log
    elif result.error is not None:
        say(f"error: {result.error.message}")
    return result.exit_code


def _compile(request: RankRequest, place: RankRun, say: Any) -> int:
    """``compile``/``profile`` for this rank: a process group first (model scripts use dist)."""
    import datetime

    from airctl.backends import choose
    from airctl.errors import AirctlError

    try:
        backend = choose(request.target.backend)
    except AirctlError as e:
        say(f"error: {e.message}")
        return int(e.exit_code)
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=request.collective_timeout_s) if request.collective_timeout_s else None
    dist.init_process_group(backend.process_group, timeout=timeout)
    try:
        error = _profile(request, place, say) if request.command == "profile" else _compile_once(request, place, say)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    if error is not None:
        say(f"error: {error.message}")
        return int(error.exit_code)
    return 0


def _profile(request: RankRequest, place: RankRun, say: Any) -> Any:
    """This rank's profile; its own trace and summary go to ranks/<rank>/profile/."""
    from airctl.pipeline.profile import ProfileRequest, profile_model, summarize_run

    req = ProfileRequest(request.target, steps=request.steps, warmup=request.warmup, rank=place)
    run = profile_model(req, progress=say)
    if run.timelines:
        summarize_run(run, req)
    return run.error


def _compile_once(request: RankRequest, place: RankRun, say: Any) -> Any:
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    return compile_model(CompileRequest(request.target, command="compile", rank=place), progress=say).error


if __name__ == "__main__":
    signals.arm()  # before the imports main makes (torch, TorchAir, the user's script)
    code = main(sys.argv[1:])
    exit_leaving_threads(code, f"airctl[rank {os.environ.get('RANK', '?')}]", whole_process=True)
