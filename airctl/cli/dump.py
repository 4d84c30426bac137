"""``airctl dump``: print or write one graph (a TorchAir dump, a graph JSON, a ledger stage) in another format."""

from __future__ import annotations

from pathlib import Path

import typer

TEXT_TYPES = ("json", "fx", "pbtxt", "txt")
RENDER_TYPES = ("dot", "svg", "png", "html")

HELP = (
    "Read a graph and print it as JSON, an FX-style listing, TorchAir pbtxt or GE txt; or render it.\n\n"
    "SOURCE is a TorchAir dump (.pbtxt, .txt, .py), an airctl graph .json, or a ledger folder "
    "(then --stage picks the stage; default: the last stage of the first graph, but fx-final for --type fx and "
    "the last GE stage, ge-optimized, for --type pbtxt/txt).\n\n"
    "[bold]Examples[/bold]\n\n"
    "  airctl dump dynamo_optimized_graph_1.pbtxt --type json\n\n"
    "  airctl dump airctl-runs/<run-id> --stage fx-final --type fx\n\n"
    "  airctl dump graph.json --type pbtxt -o graph.pbtxt\n\n"
    "  airctl dump airctl-runs/<run-id> --stage fx-final --type svg --collapse module --depth 2 -o g.svg\n"
)


def register(app: typer.Typer) -> None:
    @app.command("dump", help=HELP, no_args_is_help=True)
    def dump_cmd(
        source: Path = typer.Argument(..., help="Dump file, graph .json, ledger folder, or model script (compiled "
                                      "first).", show_default=False),
        mode: str = typer.Option("max-autotune", "--mode", "-m", help="Mode for a model script SOURCE."),
        type_: str = typer.Option("json", "--type", "-t",
                                  help=f"Output: {', '.join(TEXT_TYPES + RENDER_TYPES)}."),
        stage: str = typer.Option(None, "--stage", "-s", help="Ledger stage name or index.", show_default=False),
        out: Path = typer.Option(None, "--out", "-o", help="Write here instead of stdout.", show_default=False),
        collapse: str = typer.Option(None, "--collapse", help="Fold the graph before output: `module` (one box per "
                                     "nn.Module path, --depth parts) or `stream` (one box per run of a stream). "
                                     "Record/wait/scope nodes stay. For big graphs.", show_default=False),
        depth: int = typer.Option(2, "--depth", help="Module path parts kept by --collapse module."),
    ) -> None:
        from airctl.cli.output import err

        text = dump(source, type_, stage, out, mode, collapse=collapse, depth=depth)
        if text is None:
            return
        if out is None:
            typer.echo(text, nl=not text.endswith("\n"))
        else:
            out.write_text(text, encoding="utf-8")
            err.print(f"wrote {out}")


def dump(source: Path, type_: str, stage: str | None, out: Path | None, mode: str = "max-autotune",
         collapse: str | None = None, depth: int = 2) -> str | None:
    """The text to print for ``--type`` (None when a renderer wrote ``out`` itself)."""
    from airctl.errors import AirctlError
    from airctl.ledger.defaults import Request, StageRequest
    from airctl.pipeline.source import load_source

    if type_ not in TEXT_TYPES + RENDER_TYPES:
        raise AirctlError(f"unknown --type {type_!r}", hint=f"choose one of: {', '.join(TEXT_TYPES + RENDER_TYPES)}")
    graph = load_source(source, stage, StageRequest(Request.DUMP, output_type=type_), mode=mode)
    if collapse:
        from airctl.render.collapse import collapse as fold

        graph = fold(graph, collapse, depth)
    if type_ in RENDER_TYPES:
        _render(graph, type_, out or Path(f"{source.stem or 'graph'}.{type_}"))
        return None
    if type_ == "fx":
        from airctl.io.listing import format_listing

        return format_listing(graph)
    from airctl.io.read import write_graph

    return write_graph(graph, type_)


def _render(graph: object, type_: str, out: Path) -> None:
    from airctl.cli.output import err
    from airctl.errors import AirctlError

    try:
        import importlib

        render = importlib.import_module("airctl.render")
    except ModuleNotFoundError as e:
        if e.name and not e.name.startswith("airctl.render"):
            raise
        raise AirctlError(f"--type {type_} needs airctl.render, which this build does not have",
                          hint="use --type json, fx, pbtxt or txt") from e
    render_to = getattr(render, "render_to", None)
    if render_to is None:
        raise AirctlError(f"--type {type_}: airctl.render has no render_to()", hint="use --type json, fx, pbtxt or txt")
    render_to(graph, type_, out)
    err.print(f"wrote {out}")
