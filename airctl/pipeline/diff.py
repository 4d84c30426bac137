"""``airctl diff``: pick the two graphs to compare, diff them, and write the HTML and SVG views.

Two sources (files, ledgers, model scripts), or two stages of one ledger: by default its first
AOT stage and its last FX stage, i.e. what every pass did (docs/diff.md). No source: the current
run's two stages; ``runs``: one run's (``--run ID``), or two runs against each other. The structural diff is
:func:`airctl.diff.diff_graphs`; the views are the report's page and the renderer's SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from airctl.diff import DiffReport, diff_graphs
from airctl.errors import AirctlError
from airctl.graph.model import Graph
from airctl.io.output_path import claim_output
from airctl.ledger.runs import resolve_run


@dataclass
class DiffOutcome:
    old: Graph
    new: Graph
    report: DiffReport
    written: list[Path] = field(default_factory=list)  # --html / --svg files, in that order

    def to_json(self) -> dict:
        return self.report.to_json()


def diff_sources(a: Path | None, b: Path | None = None, *, from_stage: str | None = None,
                 to_stage: str | None = None, html: Path | None = None, svg: Path | None = None,
                 runs: Sequence[str] = (), runs_dir: Path = Path("airctl-runs"), force: bool = False) -> DiffOutcome:
    """Diff ``a`` against ``b`` (or two stages of ledger ``a``); write ``html``/``svg`` when given.
    With no ``a``: the current run's stages, or the ledgers of ``runs`` (one, or two compared)."""
    a, b = _sources(a, b, runs, runs_dir)
    for path, option in ((html, "--html"), (svg, "--svg")):
        if path is not None:
            claim_output(path, [a, b], force=force, option=option)
    old, new = load_pair(a, b, from_stage, to_stage)
    outcome = DiffOutcome(old, new, diff_pair(old, new))
    if html is not None:
        from airctl.render import output_file
        from airctl.report.page import diff_page

        output_file(html).write_text(diff_page(old, new, outcome.report), encoding="utf-8")
        outcome.written.append(Path(html))
    if svg is not None:
        from airctl.render import render_to
        from airctl.render.diffview import merged_graph

        merged, status = merged_graph(old, new, outcome.report)
        outcome.written.append(render_to(merged, "svg", svg, status=status))
    return outcome


def _sources(a: Path | None, b: Path | None, runs: Sequence[str], runs_dir: Path) -> tuple[Path, Path | None]:
    if runs and a is not None:
        raise AirctlError("give A [B] or --run, not both", hint="--run picks runs when no graph is given")
    if len(runs) > 2:
        raise AirctlError(f"--run given {len(runs)} times", hint="one run (its stages), or two runs (A against B)")
    if a is None:
        if len(runs) == 2:
            return resolve_run(runs_dir, runs[0]), resolve_run(runs_dir, runs[1])
        return resolve_run(runs_dir, runs[0] if runs else None), None
    return a, b


def diff_pair(old: Graph, new: Graph) -> DiffReport:
    return diff_graphs(old, new)


def load_pair(a: Path, b: Path | None, from_stage: str | None, to_stage: str | None) -> tuple[Graph, Graph]:
    """The two graphs to compare: two sources, or two stages of ledger ``a`` (defaults: docs/ledger.md)."""
    from airctl.io.source import is_ledger
    from airctl.ledger.defaults import Request, StageRequest
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.source import load_source

    if b is not None:
        return load_source(a, from_stage, Request.DIFF_SOURCE), load_source(b, to_stage, Request.DIFF_SOURCE)
    if not is_ledger(a):
        raise AirctlError("diff needs two graphs, or one ledger folder with --from/--to", file=str(a),
                          hint="airctl diff OLD NEW  |  airctl diff LEDGER --from STAGE --to STAGE")
    ledger = Ledger.open(a)
    old = ledger.load(ledger.find_stage(from_stage, request=Request.DIFF_FROM))
    # FX against GE matches nothing: the new side defaults to the old side's dialect
    new = ledger.load(ledger.find_stage(to_stage, request=StageRequest(Request.DIFF_TO, dialect=old.dialect)))
    return old, new
