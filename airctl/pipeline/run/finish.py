"""The last steps of every run: the findings of its pass instruments into ``index.json``, then ``report.html``.

A failure while writing the report is recorded in the index (``report_error``) instead of hiding
the run's own result.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("airctl")


def verify_instruments(mode: str) -> list[Any]:
    """The verify-each instrument: the static verifier after every pass."""
    from airctl.instrument.verify_each import VerifyEachGraph

    return [VerifyEachGraph(mode)]


def _record_findings(ledger: Any, session: Any) -> None:
    if session is None:
        return
    rows: list[dict[str, Any]] = session.findings()
    first: dict[str, str] = {}
    for row in rows:
        first.setdefault(row.get("rule", "?"), f"{row.get('graph')}:{row.get('stage')}")
    ledger.set_findings(rows, first)


def close_run(ledger: Any, session: Any, status: str | None = None, write_report: bool = True,
              draft: Any = None) -> None:
    """``ledger.finish(status)``, then :func:`finish_ledger`. Ctrl-C while they run (waiting for the
    ledger's files, compressing the log, writing the report) marks a run that was ending ok
    ``interrupted``, as it would be a moment earlier; a failed run keeps its error."""
    try:
        ledger.finish(status)
        finish_ledger(ledger, session, write_report=write_report, draft=draft)
    except KeyboardInterrupt as stop:
        from airctl.pipeline.run.lifecycle import mark_interrupted

        mark_interrupted(ledger, stop)
        raise


def finish_ledger(ledger: Any, session: Any, write_report: bool = True, draft: Any = None) -> None:
    """Findings into the index, the log compressed, then ``report.html`` (from ``draft``, an
    :class:`airctl.report.ReportDraft` made earlier, when it still fits the index)."""
    _record_findings(ledger, session)
    if session is not None and getattr(session, "compress_log", False):
        ledger.compress_log()
    if not write_report:
        return
    try:
        from airctl.report import write_report as write

        ledger.set_report(write(ledger.root, graphs=ledger.graphs_written, draft=draft))
    except Exception as e:  # the run's result matters more than its viewer
        log.debug("report.html could not be written", exc_info=True)  # recorded below; no traceback on stderr
        ledger.set_report(error=f"{type(e).__name__}: {e}")
