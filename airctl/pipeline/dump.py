"""``airctl dump``: read one graph (compiling a model script first), fold it, write it in another format.

Text formats (json, fx, pbtxt, txt) come back as text, and are written to ``out`` when given;
pictures go to a file always: dot/svg/png through :func:`airctl.render.render_to`, html through
the report's single-graph viewer (:func:`airctl.report.page.graph_page`).

No SOURCE means the current run (:func:`airctl.ledger.runs.resolve_run`; ``run`` picks another).
A ledger's stage defaults to what the output type needs (docs/ledger.md: pbtxt/txt the GE graph
TorchAir dumped last, fx the final FX graph). When that stage is one TorchAir dumped in the same
format (``ge-original``/``ge-optimized`` as pbtxt or txt), the text is TorchAir's own file.

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
from airctl.io.source import is_ledger
from airctl.ledger.runs import resolve_run
from airctl.modes import MAX_AUTOTUNE, GraphFormat


@dataclass
class DumpOutcome:
    graph: Graph | None  # what was written (after --collapse); None when TorchAir's own file was copied
    format: GraphFormat
    text: str | None  # the text of a text format; None for pictures
    written: Path | None  # the file written, if any
    notes: list[str] = field(default_factory=list)  # what was read: the run, its stage, TorchAir's file


def dump_source(source: Path | None, fmt: GraphFormat | str, *, stage: str | None = None, out: Path | None = None,
                mode: str = MAX_AUTOTUNE, collapse: str | None = None, depth: int = 2, run: str | None = None,
                runs_dir: Path = Path("airctl-runs"), force: bool = False) -> DumpOutcome:
    """Read ``source`` (file, ledger stage, model script; None: the current run) and turn it into ``fmt``.

    A picture without ``out`` goes to ``<source stem>.<fmt>`` in the working directory.
    """
    from airctl.ledger.defaults import Request, StageRequest
    from airctl.pipeline.source import load_source

    fmt = GraphFormat(fmt)
    notes: list[str] = []
    if source is None or run is not None:
        if source is not None:
            raise AirctlError("give a SOURCE or --run, not both", hint="--run picks a run when no SOURCE is given")
        source = resolve_run(runs_dir, run)
        notes.append(f"run {source.name}" + ("" if run else " (the current run)"))
    if out is None and not fmt.is_text:
        out = Path(f"{Path(source).stem or 'graph'}.{fmt.value}")  # a picture always goes to a file
    if out is not None:
        out = claim_output(out, [source], force=force)  # never over the input, a ledger, or (unforced) a file
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
        notes.append(f"graph {ref.graph_id}, stage {ref.name}")
    graph = load_source(source, stage, request, mode=mode)
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
                return path.read_text(encoding="utf-8", errors="replace"), note
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
