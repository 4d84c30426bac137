"""``airctl diff``: pick the two graphs to compare, diff them, and write the HTML and SVG views.

Two sources (files, ledgers, model scripts), or two stages of one ledger: by default its first
AOT stage and its last FX stage, i.e. what every pass did (docs/diff.md). No source: the current
run's two stages; ``runs``: one run's (``--run ID``), or two runs against each other. A and B are
SOURCEs as every command takes them (:mod:`airctl.pipeline.source`: a run id, ``latest``, a
folder, a graph file, a model script). Two runs (two ledgers, or
``--run`` twice) with no stage named are compared stage by stage
(:mod:`airctl.diff.runs`); with ``--from``/``--to``, those stages (one named: the same in both).
The structural diff is :func:`airctl.diff.diff_graphs`; the views are the report's page and the
renderer's SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from airctl.diff import DiffReport, diff_graphs
from airctl.diff.runs import DIFFERS, RunsDiff, diff_runs
from airctl.errors import AirctlError
from airctl.graph.model import Graph
from airctl.io.output_path import claim_output
from airctl.ledger.pass_window import PassWindow
from airctl.ledger_files import is_ledger
from airctl.pipeline.target import EveryMode


@dataclass
class DiffOutcome:
    """One diff (``report``, between ``old`` and ``new``), or two runs stage by stage (``runs``)."""

    old: Graph | None = None
    new: Graph | None = None
    report: DiffReport | None = None
    runs: RunsDiff | None = None
    written: list[Path] = field(default_factory=list)  # --html / --svg files, in that order
    window: PassWindow | None = None  # plain `airctl diff` of a run with YAML passes: their stages

    def to_json(self) -> dict:
        if self.runs is not None:
            return self.runs.to_json()
        data = self.report.to_json() if self.report else {}
        if self.window is not None:
            data["user_passes"] = self.window.to_json()
        return data


def diff_sources(a: Path | None, b: Path | None = None, *, from_stage: str | None = None,
                 to_stage: str | None = None, html: Path | None = None, svg: Path | None = None,
                 runs: Sequence[str] = (), runs_dir: Path = Path("airctl-runs"),
                 every: EveryMode | None = None) -> DiffOutcome:
    """Diff ``a`` against ``b`` (or two stages of ledger ``a``); write ``html``/``svg`` when given.
    With no ``a``: the current run's stages, or the ledgers of ``runs`` (one, or two compared).
    Two ledgers and neither ``from_stage`` nor ``to_stage``: the runs stage by stage."""
    a, b = _sources(a, b, runs, runs_dir)
    for path, option in ((html, "--html"), (svg, "--svg")):
        if path is not None:
            claim_output(path, [a, b], option=option)
    if b is not None and from_stage is None and to_stage is None and _is_ledger(a) and _is_ledger(b):
        return _diff_runs(a, b, html, svg)
    window = _user_window(a) if b is None and from_stage is None and to_stage is None else None
    if window is not None:
        from_stage, to_stage = f"{window.before.graph_id}/{window.before.name}", \
            f"{window.after.graph_id}/{window.after.name}"
    old, new = load_pair(a, b, from_stage, to_stage, runs_dir, every)
    outcome = DiffOutcome(old, new, diff_pair(old, new), window=window)
    outcome.report.a_name, outcome.report.b_name = _side_labels(a, b, from_stage, to_stage, old)
    if html is not None:
        from airctl.render import output_file
        from airctl.report.page import diff_page

        title = f"diff: {outcome.report.a_name} \u2192 {outcome.report.b_name}"
        output_file(html).write_text(diff_page(old, new, outcome.report, title=title), encoding="utf-8")
        outcome.written.append(Path(html))
    if svg is not None:
        from airctl.render import render_to
        from airctl.render.diffview import merged_graph

        merged, status = merged_graph(old, new, outcome.report)
        outcome.written.append(render_to(merged, "svg", svg, status=status))
    return outcome


def _user_window(source: Path) -> PassWindow | None:
    """Plain ``airctl diff`` of a run: its YAML passes' window (:mod:`airctl.ledger.pass_window`)."""
    if not _is_ledger(source):
        return None
    from airctl.ledger.pass_window import user_pass_window
    from airctl.ledger.reader import Ledger

    index = Ledger.open(source).index
    for graph in index.graphs:
        window = user_pass_window(index.stages(graph.id))
        if window is not None:
            return window
    return None


def _side_labels(a: Path, b: Path | None, from_stage: str | None, to_stage: str | None,
                 old: Graph) -> tuple[str, str]:
    """What each side of a diff is, for its header and title: ``<run>:<graph>/<stage>`` for a ledger
    stage, else the file (``original → original`` named neither run nor stage)."""
    from airctl.io.paths import shareable_path
    from airctl.ledger.defaults import Request, StageRequest
    from airctl.ledger.reader import Ledger

    def of(path: Path, stage: str | None, request: StageRequest | Request) -> str:
        if not _is_ledger(path):
            return shareable_path(Path(path).absolute())
        ledger = Ledger.open(path)
        ref = ledger.find_stage(stage, request=request)
        return f"{ledger.index.run_id or Path(path).name}:{ref.graph_id}/{ref.name}"

    if b is None:
        return of(a, from_stage, Request.DIFF_FROM), of(a, to_stage, StageRequest(Request.DIFF_TO,
                                                                                 dialect=old.dialect))
    if _is_ledger(a) and _is_ledger(b):
        from_stage, to_stage = from_stage or to_stage, to_stage or from_stage
    return of(a, from_stage, Request.DIFF_SOURCE), of(b, to_stage, Request.DIFF_SOURCE)


def _is_ledger(path: Path) -> bool:
    return is_ledger(Path(path))


def _diff_runs(a: Path, b: Path, html: Path | None, svg: Path | None) -> DiffOutcome:
    """Two runs stage by stage (:mod:`airctl.diff.runs`); ``html``: every stage that differs, A then B."""
    if svg is not None:
        raise AirctlError("--svg draws one diff; two runs differ stage by stage", file=str(b),
                          hint="pick the stage: airctl diff RUN_A RUN_B --from STAGE --svg FILE (or use --html)")
    outcome = DiffOutcome(runs=diff_runs(a, b))
    if html is not None:
        from airctl.render import output_file
        from airctl.report.page import diffs_page

        pairs = [(f"{gid}/{stage.name}", *stage.graphs, stage.report) for gid, stage in outcome.runs.stages(DIFFERS)
                 if stage.graphs is not None and stage.report is not None]
        title = f"diff: {outcome.runs.a['run_id'] or a} \u2192 {outcome.runs.b['run_id'] or b}" + (
            "" if pairs else " (no stage differs)")
        output_file(html).write_text(diffs_page(pairs, title, run={"a": outcome.runs.a, "b": outcome.runs.b,
                                                                    "summary": outcome.runs.summary()}),
                                     encoding="utf-8")
        outcome.written.append(Path(html))
    return outcome


def _sources(a: Path | None, b: Path | None, runs: Sequence[str], runs_dir: Path) -> tuple[Path, Path | None]:
    """A and B as every command resolves a SOURCE (:mod:`airctl.pipeline.source`); ``--run`` once
    stands for A, twice for A and B."""
    from airctl.pipeline.source import GRAPHS, not_both, resolve_source

    if len(runs) > 2:
        raise AirctlError(f"--run given {len(runs)} times", hint="one run (its stages), or two runs (A against B)")
    if runs and a is not None:
        raise not_both("A [B]")
    if len(runs) == 2:
        old, new = (resolve_source(None, run, out_dir=runs_dir).path for run in runs)
        return old, new
    first = resolve_source(a, runs[0] if runs else None, out_dir=runs_dir, accepts=GRAPHS).path
    return first, None if b is None else resolve_source(b, out_dir=runs_dir, accepts=GRAPHS).path


def diff_pair(old: Graph, new: Graph) -> DiffReport:
    return diff_graphs(old, new)


def load_pair(a: Path, b: Path | None, from_stage: str | None, to_stage: str | None,
              runs_dir: Path = Path("airctl-runs"), every: EveryMode | None = None) -> tuple[Graph, Graph]:
    """The two graphs to compare: two sources (a model script compiled into ``runs_dir``), or two stages
    of ledger ``a`` (defaults: docs/ledger.md)."""
    from airctl.ledger.defaults import Request, StageRequest
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.source import load_source

    if b is not None:
        if _is_ledger(a) and _is_ledger(b):  # two runs, one stage named: the same stage of both
            from_stage, to_stage = from_stage or to_stage, to_stage or from_stage
        # the diff uses the graphs as read: their readers' reference tables serve its matcher (graph/refs.py)
        return (load_source(a, from_stage, Request.DIFF_SOURCE, runs_dir=runs_dir, every=every, keep_refs=True),
                load_source(b, to_stage, Request.DIFF_SOURCE, runs_dir=runs_dir, every=every, keep_refs=True))
    if not is_ledger(a):
        raise AirctlError("diff needs two graphs, or one ledger folder with --from/--to", file=str(a),
                          hint="airctl diff OLD NEW  |  airctl diff LEDGER --from STAGE --to STAGE")
    ledger = Ledger.open(a)
    old = ledger.load(ledger.find_stage(from_stage, request=Request.DIFF_FROM), keep_refs=True)
    # FX against GE matches nothing: the new side defaults to the old side's dialect
    new = ledger.load(ledger.find_stage(to_stage, request=StageRequest(Request.DIFF_TO, dialect=old.dialect)),
                      keep_refs=True)
    return old, new
