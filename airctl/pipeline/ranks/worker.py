"""One rank of a multi-rank run: ``python -m airctl.pipeline.ranks.worker LEDGER`` under torchrun.

:mod:`airctl.pipeline.ranks.launch` runs torchrun's agent inside airctl and has it start this module
(torchrun's ``--no-python`` form) instead of ``python SCRIPT.py``. Every worker reads what to do
from ``LEDGER/ranks/request.json`` (written by the launcher: the command, the script and its
arguments, airctl's options) and runs airctl's ordinary pipeline for its rank, into its own
ledger ``LEDGER/ranks/<RANK>/``:

- ``run``: :func:`~airctl.pipeline.compile.run_script.run_script` on the user's script, unmodified;
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REQUEST_FILE = "request.json"


@dataclass
class RankRequest:
    """What every rank of a run does (``ranks/request.json``)."""

    command: str  # run, compile, profile
    script: str
    args: list[str] = field(default_factory=list)
    backend: str = "auto"
    check: bool = True
    atol: float = 1e-5
    collective_timeout_s: float | None = 60.0
    options: dict[str, Any] = field(default_factory=dict)  # compile/profile: mode, passes_file, entry, steps, ...

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def read(cls, path: Path) -> RankRequest:
        return cls(**json.loads(path.read_text(encoding="utf-8")))


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

    def fields(self) -> dict[str, Any]:
        return {"rank": self.rank, "world_size": self.world_size, "local_rank": self.local_rank,
                "restart_count": self.restart_count}


def rank_folder(ledger: Path, rank: Rank) -> Path:
    """``ranks/<rank>``; an earlier attempt found there is moved aside first."""
    root = ledger / "ranks" / str(rank.rank)
    if root.exists() and any(root.iterdir()):
        root.rename(root.with_name(f"{rank.rank}.attempt-{max(rank.restart_count - 1, 0)}"))
    return root


def _stop_on_sigterm(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name} (torchrun stops every rank once one failed)")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m airctl.pipeline.ranks.worker LEDGER  (started by airctl's launcher)", file=sys.stderr)
        return 2
    ledger = Path(argv[0])
    request = RankRequest.read(ledger / "ranks" / REQUEST_FILE)
    rank = Rank.from_env()
    signal.signal(signal.SIGTERM, _stop_on_sigterm)  # kept: sim/patched_signal_handlers
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the watchdog asks for every thread's stack
    root = rank_folder(ledger, rank)
    from airctl.ledger.collectives import LOG_FILE, CollectiveLog

    log = CollectiveLog(root / LOG_FILE)

    def say(message: str) -> None:
        print(f"airctl[rank {rank.rank}]: {message}", file=sys.stderr, flush=True)

    fields = {**rank.fields(), "pid": os.getpid()}
    try:
        if request.command == "run":
            return _run(request, root, fields, log, say)
        return _compile(request, root, fields, log, say)
    except KeyboardInterrupt as stop:
        say(str(stop) or "interrupted")
        return 128 + signal.SIGTERM
    finally:
        log.close()


def _run(request: RankRequest, root: Path, fields: dict[str, Any], log: Any, say: Any) -> int:
    from airctl.pipeline.compile.run_errors import show
    from airctl.pipeline.compile.run_script import RunRequest, run_script

    result = run_script(RunRequest(Path(request.script), args=list(request.args), backend=request.backend,
                                   check=request.check, atol=request.atol, ledger_root=root, ledger_fields=fields,
                                   collectives=log, collective_timeout_s=request.collective_timeout_s),
                        progress=say)
    if result.end.failed:
        show(result.end)  # the traceback Python would print, in this rank's console log
    elif result.error is not None:
        say(f"error: {result.error.message}")
    return result.exit_code


def _compile(request: RankRequest, root: Path, fields: dict[str, Any], log: Any, say: Any) -> int:
    """``compile``/``profile`` for this rank: a process group first (model scripts use dist)."""
    import datetime

    from airctl.backends import choose
    from airctl.errors import AirctlError

    options = request.options
    try:
        backend = choose(request.backend)
    except AirctlError as e:
        say(f"error: {e.message}")
        return int(e.exit_code)
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=request.collective_timeout_s) if request.collective_timeout_s else None
    dist.init_process_group("gloo" if backend.name == "sim" else "hccl", timeout=timeout)
    try:
        if request.command == "profile":
            from airctl.pipeline.profile import ProfileRequest, profile_model, summarize_run

            req = ProfileRequest(
                Path(request.script), mode=options.get("mode", "max-autotune"),
                passes_file=Path(options["passes_file"]) if options.get("passes_file") else None,
                steps=options.get("steps", 5), warmup=options.get("warmup", 1), backend=backend.name,
                entry=options.get("entry"), ledger_root=root, ledger_fields=fields, collectives=log,
                collective_timeout_s=request.collective_timeout_s)
            run = profile_model(req, progress=say)
            if run.timelines:
                summarize_run(run, req)  # this rank's own trace and summary, in ranks/<rank>/profile/
            error = run.error
        else:
            from airctl.pipeline.compile.compiler import CompileRequest, compile_model

            result = compile_model(CompileRequest(
                Path(request.script), mode=options.get("mode", "max-autotune"), backend=backend.name,
                entry=options.get("entry"), passes_file=options.get("passes_file"), atol=request.atol,
                capture=options.get("capture", "default"), command="compile", ledger_root=root, ledger_fields=fields,
                collectives=log, collective_timeout_s=request.collective_timeout_s), progress=say)
            error = result.error
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    if error is not None:
        say(f"error: {error.message}")
        return int(error.exit_code)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
