"""The top ledger of a multi-rank run, written once torchrun's agent returned: one entry per rank.

Each rank wrote its own ledger (``ranks/<rank>/``); this module reads them back with what only
the launcher knows — how each worker process ended (torchrun's failure records: exit code,
signal), where its console went (torchrun's ``--log-dir``), where its collective log last saw
it — and writes the ``ranks`` list, ``world_size``, the first divergence between the ranks'
issued collectives (:mod:`airctl.verify.ranks`), and the run's status and error.

A rank whose process ended before its ledger did (gloo aborts the process on a size mismatch;
a SIGKILL) has its own ledger finished here: status ``failed`` (``interrupted`` when airctl or
torchrun stopped it), with the reason as its error.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.ledger.collectives import LOG_FILE, read_log
from airctl.ledger.index import RankEntry
from airctl.ledger.reader import Ledger
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.ranks.watchdog import describe_last
from airctl.pipeline.run.lifecycle import Run
from airctl.verify.ranks import compiled_collectives, compiled_differences, first_issued_difference

STOP_SIGNALS = ("SIGTERM", "SIGKILL", "SIGINT")


@dataclass
class Failure:
    """How torchrun saw a worker end (``ChildFailedError.failures[rank]``)."""

    exit_code: int
    signal: str | None = None

    @classmethod
    def of(cls, failure: Any) -> Failure:
        code = int(getattr(failure, "exitcode", 1))
        name = None
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
        return cls(code, name)


def rank_numbers(top: Path, failures: dict[int, Failure]) -> list[int]:
    """The global ranks this node ran: those with a folder under ``ranks/``, and those torchrun
    reported failed (a rank may die before it made its folder)."""
    folders = {int(p.name) for p in (top / "ranks").glob("*") if p.is_dir() and p.name.isdigit()}
    return sorted(folders | set(failures))


def rank_entries(top: Path, ranks: list[int], failures: dict[int, Failure], stopped: bool) -> list[RankEntry]:
    """One entry per rank; finishes rank ledgers their process left ``running``."""
    now = time.time()
    entries = []
    for rank in ranks:
        folder = top / "ranks" / str(rank)
        failure = failures.get(rank)
        entry = RankEntry(rank=rank, exit_code=failure.exit_code if failure else 0)
        if failure is not None and failure.signal:
            entry.signal = failure.signal
        if Ledger.is_ledger(folder):
            entry.ledger = f"ranks/{rank}"
            index = Ledger.open(folder).index
            if index.status in ("running", "died"):  # on disk still running: its process ended (readers say died)
                _finish_abandoned(folder, index, failure, stopped)
                index = Ledger.open(folder).index
            entry.status = index.status
            if index.error:
                entry.error = index.error.splitlines()[0][:300]
            detail = index.error_detail if isinstance(index.error_detail, dict) else {}
            if index.status in STOPPED and detail.get("user_code") and detail.get("where"):
                entry.stuck = str(detail["where"])
        else:
            entry.status = "missing"
            entry.error = "the rank never started its ledger" + (
                f" (its process ended with {_how(failure)})" if failure else "")
        logs = _console_logs(top, rank)
        if logs:
            entry.log = logs
        last = read_log(folder / LOG_FILE).last(now)
        if last is not None and last.get("state") == "blocked":  # the process has ended since
            last["state"] = "ended while blocked"
            last.pop("since_s", None)
        if last is not None:
            entry.last = {**last, "summary": describe_last(last)}
        entries.append(entry)
    return entries


STOPPED = ("interrupted", "terminated")  # a rank airctl or torchrun stopped, not the cause


def _how(failure: Failure | None) -> str:
    if failure is None:
        return "exit code 0"
    return failure.signal or f"exit code {failure.exit_code}"


def _finish_abandoned(folder: Path, index: Any, failure: Failure | None, stopped: bool) -> None:
    writer = LedgerWriter(folder, index)
    writer.forget_missing()  # snapshots still queued for the background writer when the process ended
    how = _how(failure)
    by_us = stopped or (failure is not None and failure.signal in STOP_SIGNALS)
    Run.adopt(writer).fail(f"the rank's process ended ({how}) before its ledger was finished"
                           + (": stopped by airctl's watchdog or torchrun" if by_us else ""),
                           {"type": "RankEnded", "exit_code": failure.exit_code if failure else None,
                            "signal": failure.signal if failure else None},
                           status="interrupted" if by_us else "failed")


def _console_logs(top: Path, rank: int) -> dict[str, str] | None:
    """torchrun's per-worker stdout/stderr under ``logs/`` (latest attempt; local rank = rank on one node)."""
    found: dict[str, str] = {}
    for name in ("stdout", "stderr"):
        files = sorted((top / "logs").glob(f"*/attempt_*/{rank}/{name}.log"), key=lambda p: p.parent.parent.name)
        if files:
            found[name] = str(files[-1].relative_to(top))
    return found or None


def divergence(top: Path, ranks: list[int]) -> list[dict[str, Any]]:
    """The first differing issued collective, then graphs compiled differently (docs/multi-rank.md)."""
    out: list[dict[str, Any]] = []
    issued = first_issued_difference({r: read_log(top / "ranks" / str(r) / LOG_FILE).issued for r in ranks})
    if issued is not None:
        out.append({"kind": "issued", **issued.to_json()})
    per_rank = {}
    for r in ranks:
        folder = top / "ranks" / str(r)
        if Ledger.is_ledger(folder):
            try:
                per_rank[r] = compiled_collectives(folder)
            except Exception:  # noqa: BLE001 - an unreadable rank ledger: `airctl check` says why
                continue
    for finding in compiled_differences(per_rank):
        out.append({"kind": "compiled", "message": finding.message, "graph": finding.graph, "nodes": finding.nodes})
    return out


def run_status(entries: list[RankEntry], watchdog: str | None) -> tuple[str, str | None]:
    """The top ledger's status and error from its ranks'. A rank that was stopped while in the user's
    own code (``stuck``) while another failed is what the others waited for: it is named first."""
    stuck = [e for e in entries if e.stuck]
    failed = [e for e in entries if e.status not in ("ok", "mismatch", *STOPPED)]
    if stuck and (failed or watchdog):
        first = stuck[0]
        waited = ", ".join(f"rank {e.rank}" for e in failed) or "the others"
        return "failed", (f"rank {first.rank} was stuck in its own code ({first.stuck}) when the run was stopped; "
                          f"{waited} failed waiting for it" + (f" ({watchdog})" if watchdog else
                                                                f": {failed[0].error or 'no error recorded'}"))
    if watchdog:
        return "failed", watchdog
    bad = [e for e in entries if e.status not in ("ok", "mismatch")]
    if bad:
        first = min(bad, key=lambda e: (e.status in STOPPED, e.rank))  # the cause before the stopped
        how = f" ({first.signal})" if first.signal else (f" (exit code {first.exit_code})" if first.exit_code else "")
        return "failed", f"rank {first.rank} {first.status}{how}: {first.error or 'no error recorded'}"
    if any(e.status == "mismatch" for e in entries):
        ranks = ", ".join(str(e.rank) for e in entries if e.status == "mismatch")
        return "mismatch", f"rank(s) {ranks}: compiled graphs differ from their eager reference"
    return "ok", None


def rank_backend(top: Path, entries: list[RankEntry]) -> dict[str, Any] | None:
    """The backend the ranks ran on (the first rank ledger that says)."""
    for e in entries:
        if e.ledger:
            backend = Ledger.open(top / e.ledger).index.backend
            if backend:
                return backend
    return None
