"""The files a profile leaves in its ledger, which ``report.html`` embeds (its Profile section)::

    <ledger>/profile/trace.json      Chrome trace (chrome_trace.py): open in https://ui.perfetto.dev
    <ledger>/profile/summary.json    the object ``airctl profile --json`` prints (summary.py)
    <ledger>/profile/timeline.svg    the picture (timeline_svg.py)
    <ledger>/profile/timeline.png    the same, with --png (headless Chromium)
    <ledger>/profile/compare.json    with --compare: the side-by-side numbers (compare.py)

The ledger's report.html is rewritten to show them by :mod:`airctl.pipeline.profile_files`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from airctl.execute.timeline import Timeline
from airctl.ledger_files import PROFILE_DIR as PROFILE_DIR  # named with the ledger's layout, used by its readers
from airctl.ledger_files import TRACE_FILE
from airctl.profile.ascend.folders import json_object
from airctl.profile.chrome_trace import write_chrome_trace
from airctl.profile.timeline_svg import render_svg, svg_to_png

SUMMARY_FILE = "summary.json"
SVG_FILE = "timeline.svg"
PNG_FILE = "timeline.png"
COMPARE_FILE = "compare.json"


class Summary(Protocol):
    """A ProfileSummary, or the several-rank summary of ``profile analyze`` (ranks.py)."""

    trace: str | None
    meta: dict[str, Any]

    def to_json(self) -> dict[str, Any]: ...


@dataclass
class ProfileFiles:
    folder: Path
    trace: Path
    summary: Path
    svg: Path
    png: Path | None = None


def write_profile(folder: Path, timelines: list[Timeline], summary: Summary, *, title: str | None = None,
                  png: bool = False, meta: dict[str, Any] | None = None) -> ProfileFiles:
    """Write the trace, the summary (its ``trace`` field set to the trace's path) and the picture into
    ``folder`` (usually ``<ledger>/profile``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = ProfileFiles(folder, folder / TRACE_FILE, folder / SUMMARY_FILE, folder / SVG_FILE)
    trace_meta = {**summary.meta, **(meta or {})}
    write_chrome_trace(files.trace, timelines, trace_meta)
    summary.trace = str(files.trace)
    files.svg.write_text(render_svg(timelines, title), encoding="utf-8")
    if png:
        files.png = svg_to_png(files.svg, folder / PNG_FILE)
        summary.meta["png"] = str(files.png)
    summary.meta["svg"] = str(files.svg)
    files.summary.write_text(json.dumps(summary.to_json(), indent=2, default=str) + "\n", encoding="utf-8")
    return files


def write_json(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def prediction_folder(ledger_dir: Path) -> Path:
    """``<ledger>/profile``, unless it holds a measured profile: then ``<ledger>/profile/predicted``. An
    earlier prediction there is kept, moved to ``earlier/NNN`` beside it (never overwritten)."""
    folder = Path(ledger_dir) / PROFILE_DIR
    summary = folder / SUMMARY_FILE
    if summary.is_file():
        if not ((json_object(summary) or {}).get("meta") or {}).get("predicted"):
            folder = folder / "predicted"
    keep_earlier(folder)
    return folder


def keep_earlier(folder: Path) -> None:
    """Move the prediction files in ``folder`` to ``folder/earlier/NNN`` (the next free number)."""
    files = [folder / n for n in (SUMMARY_FILE, TRACE_FILE, SVG_FILE, PNG_FILE, COMPARE_FILE) if (folder / n).is_file()]
    if not files or not (folder / SUMMARY_FILE).is_file():
        return
    earlier = folder / "earlier"
    n = 1 + max((int(p.name) for p in earlier.iterdir() if p.name.isdigit()), default=0) if earlier.is_dir() else 1
    target = earlier / f"{n:03d}"
    target.mkdir(parents=True, exist_ok=True)
    for f in files:
        f.rename(target / f.name)
