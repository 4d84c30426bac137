"""``report.html``: the single-file viewer written into every ledger at the end of a run (docs/report.md).

>>> write_report(Path("airctl-runs/<run-id>"))       # doctest: +SKIP
PosixPath('airctl-runs/<run-id>/report.html')

Called as a run ends (:meth:`airctl.pipeline.run.lifecycle.Run.finish`); also usable on any ledger folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPORT = "report.html"


@dataclass(frozen=True)
class ReportDraft:
    """The costly part of a report (each graph's stages laid out and diffed), made before the run has
    ended, and the stage list it was made from: :func:`write_report` uses it while that list holds."""

    key: str
    part: dict[str, Any]


def draft_report(ledger_dir: Path, index: Any, graphs: Mapping[str, Any] | None = None) -> ReportDraft:
    """Lay out and diff the graphs of ``index`` (a RunIndex, as the writer holds it) now: the capture
    does this while a forked child writes TorchAir's pbtxt (airctl.pipeline.compile.capture), so the two
    overlap instead of following each other."""
    from airctl.io.gc_pause import gc_paused
    from airctl.ledger.reader import Ledger
    from airctl.report.ledger_data import graphs_key, graphs_payload

    ledger = Ledger(Path(ledger_dir), index)
    key = graphs_key(ledger)
    with gc_paused():
        return ReportDraft(key, graphs_payload(ledger, graphs))


def write_report(ledger_dir: Path, graphs: Mapping[str, Any] | None = None,
                 draft: ReportDraft | None = None) -> Path | None:
    """Write ``<ledger_dir>/report.html`` from the ledger's index, snapshots, findings and profile.

    ``graphs`` (ledger-relative snapshot file -> Graph) are snapshots the caller has in memory
    already (the ledger writer's): they are not read back from disk. ``draft``
    (:func:`draft_report`) is used when the index still lists the stages it was made from."""
    from airctl.io.gc_pause import gc_paused
    from airctl.ledger.files import write_file
    from airctl.ledger.reader import Ledger
    from airctl.report.ledger_data import graphs_key, ledger_payload, read_profile
    from airctl.report.page import html_page

    root = Path(ledger_dir)
    if not Ledger.is_ledger(root):
        return None
    ledger = Ledger.open(root)
    part = draft.part if draft is not None and draft.key == graphs_key(ledger) else None
    # millions of small objects, no cycles (see airctl.io.gc_pause); the payload is dropped before the
    # collector is back, so its next collection does not walk what was already freed
    with gc_paused():
        payload = ledger_payload(ledger, graphs, part)
        profile = read_profile(root)
        timeline = None
        if profile is not None:
            payload["profile"] = profile
            svg = root / "profile" / "timeline.svg"
            if svg.is_file():
                timeline = svg.read_bytes()
        page = html_page(payload, timeline)
        del payload
    out = root / REPORT
    write_file(out, page)  # no half-written viewer left behind (a full disk, Ctrl-C)
    return out


__all__ = ["REPORT", "ReportDraft", "draft_report", "write_report"]
