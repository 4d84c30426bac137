"""TorchAir's ``.txt`` graph dumps: protobuf text of a GE ``GraphDef`` (reference/torchair.md §5.1).

Reading parses with protobuf's own text-format parser against airctl's runtime schema
(:mod:`airctl.io.ge_schema`), then maps the message with
:func:`airctl.io.ge_proto.graph_from_ge_proto`. Writing emits the same format, so the files
airctl writes load anywhere TorchAir's do (``text_format.Parse(text, GraphDef())``).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import text_format

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.io.ge_build import apply_header, apply_overrides, header_line, node_lines, read_header, to_graph_def
from airctl.io.ge_proto import graph_from_ge_proto
from airctl.io.ge_schema import message_class

HINT = "expected protobuf text of a GE GraphDef (config.debug.graph_dump.type = 'txt')"


def _parse_message(text: str, origin: str) -> Any:
    graph_def = message_class("GraphDef")()
    try:
        return text_format.Parse(text, graph_def)
    except text_format.ParseError as e:
        line, column = e.GetLine(), e.GetColumn()
        if "no field named \"graph\"" in str(e):
            return _parse_model_def(text, origin)
        message = str(e).split(" : ", 1)[-1] if line else str(e)
        if line is None:
            line = text.count("\n") + 1
        raise GraphReadError(f"not a GE GraphDef: {message}", file=origin, line=line, column=column, hint=HINT) from e
    except RecursionError as e:
        raise GraphReadError("nesting too deep", file=origin, line=1, hint=HINT) from e
    except (ValueError, TypeError, UnicodeError) as e:  # protobuf's own conversions inside the parser
        raise GraphReadError(f"not a GE GraphDef: {e}", file=origin, line=1, hint=HINT) from e


def _parse_model_def(text: str, origin: str) -> Any:
    """A ``ModelDef`` (``graph { ... }``) holding the graph, as GE's own tools write it."""
    try:
        model = text_format.Parse(text, message_class("ModelDef")())
    except text_format.ParseError as e:
        raise GraphReadError(f"not a GE ModelDef: {e}", file=origin, line=e.GetLine() or 1, column=e.GetColumn(),
                             hint=HINT) from e
    except (RecursionError, ValueError, TypeError, UnicodeError) as e:
        raise GraphReadError(f"not a GE ModelDef: {e}", file=origin, line=1, hint=HINT) from e
    if not model.graph:
        raise GraphReadError("the ModelDef holds no graph", file=origin, line=1)
    return model.graph[0]


def parse_txt(text: str, origin: str = "<txt>", default_name: str = "graph") -> Graph:
    """A graph from the text of a ``.txt`` dump; errors name ``origin`` and the line."""
    header = read_header(text, origin)
    graph_def = _parse_message(text, origin)
    lines = node_lines(text, "  name: ")
    seen: set[str] = set()
    for op in graph_def.op:
        if op.name in seen:
            raise GraphReadError(f"duplicate op name {op.name!r}", file=origin, line=lines.get(op.name), node=op.name)
        seen.add(op.name)
    graph = graph_from_ge_proto(graph_def, name=graph_def.name or default_name)
    apply_overrides(graph, origin, lines)
    return apply_header(graph, header, origin)


def write_txt(graph: Graph) -> str:
    """Protobuf text of the graph's ``GraphDef`` (plus an ``# airctl-graph:`` line when needed)."""
    graph_def, header = to_graph_def(graph)
    if not graph.name:
        header["name"] = graph.name
    text = text_format.MessageToString(graph_def)
    return (header_line(header) if header else "") + text
