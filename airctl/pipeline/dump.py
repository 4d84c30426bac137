"""``airctl dump``: read one graph (compiling a model script first), fold it, write it in another format.

Text formats (json, fx, pbtxt, txt) come back as text, and are written to ``out`` when given;
pictures go to a file always: dot/svg/png through :func:`airctl.render.render_to`, html through
the report's single-graph viewer (:func:`airctl.report.page.graph_page`).

SOURCE is resolved as every command's is (:mod:`airctl.pipeline.source`): nothing is the current
run, ``run`` (``--run``) or a run id another one, a model script is compiled first.
A ledger's stage defaults to what the output type needs (docs/ledger.md: pbtxt/txt the GE graph
TorchAir dumped last, fx the final FX graph). When that stage is one TorchAir dumped in the same
format (``ge-original``/``ge-optimized`` as pbtxt or txt), the text is TorchAir's own file.

``lanes`` is the lane view of the stream plan (:mod:`airctl.render.lanes`), with the verifier's
findings for the graph marked; the suffix of ``out`` picks the picture: ``.svg`` (default,
``<stem>.lanes.svg``), ``.png`` (the SVG through headless Chromium) or ``.html`` (the viewer opened
on its lane pane). Its semantics follow ``mode``: the ledger's own mode when SOURCE is a ledger and
no mode is given. ``collapse`` folds the lane view into runs (one row per run of ops of a module or
of a stream) instead of folding the graph; graphs of
:data:`~airctl.render.lanes.FOLD_LIMIT` nodes or more are folded by module unless told.

>>> dump_source(Path("graph.pbtxt"), GraphFormat.FX).text          # doctest: +SKIP
'MatMul = MatMul(arg0_1:0, arg0_1:0, None)  # stream=stream_1\\n...'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.graph.model import Graph
from airctl.io.output_path import claim_output
from airctl.ledger_files import is_ledger
from airctl.modes import GraphFormat, Mode
from airctl.pipeline.target import EveryMode

LANE_SUFFIXES = (".svg", ".png", ".html")
MAX_PNG_PIXELS = 30_000  # the taller side of a lane PNG; Chromium screenshots stop well before 64k


@dataclass
class DumpOutcome:
    graph: Graph | None  # what was written (after --collapse); None when TorchAir's own file was copied
    format: GraphFormat
    text: str | None  # the text of a text format; None for pictures
    written: Path | None  # the file written, if any
    notes: list[str] = field(default_factory=list)  # what was read: the run, its stage, TorchAir's file


def dump_source(source: Path | None, fmt: GraphFormat | str, *, stage: str | None = None, out: Path | None = None,
                mode: Mode | None = None, collapse: str | None = None, depth: int = 2, run: str | None = None,
                runs_dir: Path = Path("airctl-runs"), every: EveryMode | None = None) -> DumpOutcome:
    """Read ``source`` (file, ledger stage, model script; None: the current run) and turn it into ``fmt``.

    A picture without ``out`` goes to ``<source stem>.<fmt>`` in the working directory (the lane
    view: ``<source stem>.lanes.svg``). ``mode`` None: max-autotune, except that the lane view of a
    ledger follows the ledger's mode.
    """
    from airctl.ledger.defaults import Request, StageRequest
    from airctl.pipeline.source import GRAPHS, load_source, resolve_source

    fmt = GraphFormat(fmt)
    notes: list[str] = []
    resolved = resolve_source(source, run, out_dir=runs_dir, accepts=GRAPHS, option="--runs")
    if resolved.named_run:
        notes.append(resolved.describe())
    source = resolved.path
    if out is None and not fmt.is_text:  # a picture always goes to a file
        suffix = "lanes.svg" if fmt is GraphFormat.LANES else fmt.value
        out = Path(f"{Path(source).stem or 'graph'}.{suffix}")
    if fmt is GraphFormat.LANES and out is not None:
        lane_picture(out)  # refused before any work: a suffix the lane view cannot write
    if out is not None:
        out = claim_output(out, [source])  # never over the input or a ledger
    request = StageRequest(Request.DUMP, output_type=str(fmt))
    if is_ledger(source) and fmt in (GraphFormat.PBTXT, GraphFormat.TXT) and not collapse:
        own = torchair_text(source, stage, request, fmt)
        if own is not None:
            text, note = own
            notes.append(note)
            if out is not None:
                Path(out).write_text(text, encoding="utf-8")
            return DumpOutcome(None, fmt, text, Path(out) if out is not None else None, notes)
    if is_ledger(source):
        from airctl.ledger.reader import Ledger

        ref = Ledger.open(source).find_stage(stage, request=request)
        note = f"graph {ref.graph_id}, stage {ref.name}"
        if fmt in (GraphFormat.PBTXT, GraphFormat.TXT) and not collapse and ref.name == "ge-build":
            note += ": GE's build (automatic multi-stream: ops with their stream ids, GE's events), written by airctl"
        elif fmt in (GraphFormat.PBTXT, GraphFormat.TXT) and not collapse and ref.dialect == "ge":
            note += (f": written from the ledger's snapshot (TorchAir dumped no {fmt.value} of it; "
                     f"`airctl compile --capture full` or `--dump-type {fmt.value}` keeps TorchAir's own)")
        elif fmt in (GraphFormat.PBTXT, GraphFormat.TXT) and not collapse:  # an FX stage: say whose file this is
            index = Ledger.open(source).index
            run_mode = index.mode
            if index.run_mode is not None and index.run_mode.is_ge:
                note += (f": an FX graph written by airctl as {fmt.value} (TorchAir writes {fmt.value} of GE "
                         f"graphs only: --stage ge-original or ge-optimized for its own)")
            else:
                note += (f": an FX graph written by airctl as {fmt.value} (this run's mode, {run_mode}, makes no "
                         f"GE graph; TorchAir writes GE files in max-autotune only)")
        notes.append(note)
    graph = load_source(source, stage, request, mode=mode or Mode.MAX_AUTOTUNE, runs_dir=runs_dir, every=every)
    if fmt is GraphFormat.LANES:
        assert out is not None
        note = dump_lanes(graph, out, mode or _ledger_mode(source) or Mode.MAX_AUTOTUNE, collapse, depth)
        return DumpOutcome(graph, fmt, None, out, [*notes, note])
    if collapse:
        from airctl.render.collapse import collapse as fold

        graph = fold(graph, collapse, depth)
    if not fmt.is_text:
        assert out is not None
        draw(graph, fmt, out)
        return DumpOutcome(graph, fmt, None, out, notes)
    text = graph_text(graph, fmt)
    if out is not None:
        Path(out).write_text(text, encoding="utf-8")
    return DumpOutcome(graph, fmt, text, Path(out) if out is not None else None, notes)


def torchair_text(root: Path, stage: str | None, request: Any, fmt: GraphFormat) -> tuple[str, str] | None:
    """TorchAir's own dump of the ledger stage ``fmt`` asks for, when it wrote one: (text, note)."""
    from airctl.ledger.reader import Ledger, stage_path

    ledger = Ledger.open(root)
    ref = ledger.find_stage(stage, request=request)
    graph = ledger.index.graph(ref.graph_id)
    if graph is None or ref.name not in ("ge-original", "ge-optimized"):
        return None
    for dump in ledger.index.dumps:
        if dump.graph == graph.name and dump.stage == ref.name and dump.type == fmt.value:
            path = stage_path(ledger.root, dump.file, ref.name)
            if path.is_file():
                note = f"graph {ref.graph_id}, stage {ref.name}: TorchAir's own dump {path}"
                from airctl.io.compressed import read_bytes

                return read_bytes(path).decode("utf-8", errors="replace"), note
    return None


def graph_text(graph: Graph, fmt: GraphFormat) -> str:
    if fmt is GraphFormat.FX:
        from airctl.io.listing import format_listing

        return format_listing(graph)
    if fmt is GraphFormat.MODEL_EXPLORER:
        from airctl.io.model_explorer import write_model_explorer

        return write_model_explorer(graph)
    from airctl.io.read import write_graph

    return write_graph(graph, fmt.value)


def draw(graph: Graph, fmt: GraphFormat, out: Path) -> Path:
    from airctl.render import output_file, render_to

    if fmt is GraphFormat.HTML:
        from airctl.report.page import graph_page

        output_file(out).write_text(graph_page(graph), encoding="utf-8")
        return out
    return render_to(graph, fmt.value, out)


def lane_picture(target: Path) -> str:
    """The picture ``--type lanes`` writes to ``target``, by its suffix (svg, png or html)."""
    suffix = target.suffix.lower()
    if suffix not in LANE_SUFFIXES:
        raise AirctlError(f"--type lanes writes svg, png or html, not {target.suffix or 'a file without suffix'!r}",
                          file=str(target), hint="name the output plan.svg, plan.png or plan.html")
    return suffix[1:]


def _ledger_mode(source: Path | str) -> Mode | None:
    from airctl.ledger.reader import Ledger

    path = Path(source)
    if is_ledger(path):
        return Ledger.open(path).index.run_mode
    return None


def dump_lanes(graph: Graph, target: Path, mode: Mode, fold: str | None, depth: int) -> str:
    """Write the lane view of ``graph`` (svg, png or html by the suffix of ``target``); returns a line about it."""
    from airctl.render import output_file
    from airctl.render.lanes import FOLD_LIMIT, build_lanes
    from airctl.render.lanes_svg import lanes_svg, svg_size
    from airctl.verify import verify

    kind = lane_picture(target)
    output_file(target)
    findings = verify(graph, Mode.MAX_AUTOTUNE if graph.dialect == "ge" else mode)
    view = build_lanes(graph, mode, findings, fold=fold or ("module" if len(graph) >= FOLD_LIMIT else None),
                       depth=depth)
    if kind == "html":
        from airctl.report.page import graph_page

        target.write_text(graph_page(graph, mode=mode, pane="lanes"), encoding="utf-8")
    elif kind == "svg":
        target.write_text(lanes_svg(view), encoding="utf-8")
    else:
        if max(svg_size(view)) > MAX_PNG_PIXELS:
            raise AirctlError(f"the lane view is {max(svg_size(view)):.0f} px on a side, too big for a PNG",
                              file=str(target), hint="write plan.svg or plan.html, or fold it: --collapse module")
        from airctl.profile.timeline_svg import svg_to_png

        tmp = target.with_name(target.name + ".svg")
        tmp.write_text(lanes_svg(view), encoding="utf-8")
        try:
            svg_to_png(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    streams = ", ".join("default" if s is None else str(s) for s in view.streams)
    errors = sum(1 for m in view.marks if m.primary and m.severity == "error")
    marked = len({m.node for m in view.marks if m.primary})
    folded = f", {len(view.runs)} runs folded" if view.is_folded() else ""
    return (f"lanes ({view.mode}): {len(view.streams)} streams ({streams}), {len(view.arrows)} record\u2192wait "
            f"arrows, {marked} ops marked by findings ({errors} errors){folded}")
