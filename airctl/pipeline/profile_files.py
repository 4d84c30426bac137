"""A profile written into a ledger, and the ledger's report.html rewritten to show it.

The run wrote report.html when it finished, before the profile existed; every command that files a
profile (a measured run, a prediction, an imported ledger's) writes it through here so the report's
Profile tab is never older than the profile. The report is a feature above the profile's files, so
the two meet in the pipeline.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from airctl.execute.timeline import Timeline
from airctl.ledger_files import is_ledger
from airctl.profile import write as files_of_profile
from airctl.profile.write import ProfileFiles, Summary

log = logging.getLogger("airctl")


def write_profile(folder: Path, timelines: list[Timeline], summary: Summary, *, title: str | None = None,
                  png: bool = False, meta: dict[str, Any] | None = None) -> ProfileFiles:
    """:func:`airctl.profile.write.write_profile`, then the ledger's report refreshed."""
    files = files_of_profile.write_profile(folder, timelines, summary, title=title, png=png, meta=meta)
    refresh_report(Path(folder).parent)
    return files


def refresh_report(ledger_root: Path) -> Path | None:
    """Rewrite the ledger's report.html so that it shows the profile just written (its Profile tab).

    Not a ledger (``analyze`` without ``--run``): nothing to do. A failing report never fails the
    profile.
    """
    if not is_ledger(ledger_root):
        return None
    try:
        from airctl.report import write_report

        return write_report(ledger_root)
    except Exception:  # noqa: BLE001 - the profile matters more than its viewer
        log.exception("report.html could not be rewritten with the profile")
        return None
