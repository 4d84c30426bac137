"""The last steps of every run that ends: the findings of its pass instruments into ``index.json``,
its log compressed, then ``report.html``. Only :meth:`airctl.pipeline.run.lifecycle.Run.finish`
calls :func:`record_outcome`, so every command ends a run the same way.

A failure while writing the report is recorded in the index (``report_error``) instead of hiding
the run's own result.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from airctl.ledger.writer import LedgerWriter
from airctl.modes import Mode

log = logging.getLogger("airctl")


class Findings(Protocol):
    """What a run's capture hands its end (a compile's ``CaptureSession``, ``airctl run``'s
    ``RunSession``): verify-each's findings, and whether ``log.txt`` is airctl's to compress (``airctl
    run``'s log is the script's own, teed as it runs)."""

    compress_log: bool

    def findings(self) -> list[dict[str, Any]]: ...


def verify_instruments(mode: Mode) -> list[Any]:
    """The verify-each instrument: the static verifier after every pass (its findings are what
    :func:`record_outcome` records)."""
    from airctl.instrument.verify_each import VerifyEachGraph

    return [VerifyEachGraph(mode)]


def _record_findings(ledger: LedgerWriter, session: Findings) -> None:
    ledger.set_findings(session.findings() + _run_rows(ledger))


def _run_rows(ledger: LedgerWriter) -> list[dict[str, Any]]:
    """The findings of the rules that need the whole run (stream budget, stale replay: R16, R21)."""
    try:
        from airctl.verify.run_checks import run_findings

        found = run_findings(ledger.run_index, lambda ref: ledger.stage_graph(ref.entry))
    except Exception:  # a debugging aid never breaks the run's end (style.md §9)
        log.debug("the run-level checks failed", exc_info=True)
        return []
    return [{**f.to_json(), "stage": stage} for stage, f in found]


def record_outcome(ledger: LedgerWriter, session: Findings | None, *, report: bool, draft: Any = None) -> None:
    """Findings into the index, the log compressed, then ``report.html`` (from ``draft``, an
    :class:`airctl.report.ReportDraft` made earlier, when it still fits the index)."""
    if session is not None:
        _record_findings(ledger, session)
        if session.compress_log:
            ledger.compress_log()
    if not report:
        return
    try:
        from airctl.report import write_report as write

        ledger.set_report(write(ledger.root, graphs=ledger.graphs_written, draft=draft))
    except Exception as e:  # the run's result matters more than its viewer
        log.debug("report.html could not be written", exc_info=True)  # recorded below; no traceback on stderr
        ledger.set_report(error=f"{type(e).__name__}: {e}")
