"""The last steps of every run: verify-each findings into ``index.json``, then ``report.html``.

Both are optional layers over the ledger: the verifier (:mod:`airctl.verify`) and the report
writer (:mod:`airctl.report`) are looked up when a run ends, and a failure in them is recorded
in the index (``report_error``) instead of hiding the run's own result.
"""

from __future__ import annotations

import importlib.util
import logging
from typing import Any

log = logging.getLogger("airctl")


def verify_instruments(mode: str) -> list[Any]:
    """The verify-each instrument (static verifier after every pass), when the verifier exists."""
    if importlib.util.find_spec("airctl.verify.instrument") is None:
        return []
    from airctl.pipeline.verify_each import VerifyEachGraph

    return [VerifyEachGraph(mode)]


def _record_findings(ledger: Any, session: Any) -> None:
    if session is None:
        return
    rows: list[dict[str, Any]] = list(session.findings)
    for inst in session.instruments:
        if hasattr(inst, "rows"):
            rows.extend(inst.rows())
    first: dict[str, str] = {}
    for row in rows:
        first.setdefault(row.get("rule", "?"), f"{row.get('graph')}:{row.get('stage')}")
    ledger.index["findings"] = rows
    ledger.index["first_stage_with_finding"] = first
    ledger.flush()


def finish_ledger(ledger: Any, session: Any, write_report: bool = True) -> None:
    _record_findings(ledger, session)
    if not write_report or importlib.util.find_spec("airctl.report") is None:
        return
    try:
        from airctl.report import write_report as write

        path = write(ledger.root)
        ledger.index["report"] = str(path.relative_to(ledger.root)) if path else None
    except Exception as e:  # the run's result matters more than its viewer
        log.exception("report.html could not be written")
        ledger.index["report_error"] = f"{type(e).__name__}: {e}"
    ledger.flush()
