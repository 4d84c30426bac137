"""One entry point to read any graph file, and one to write any text format.

``read_graph(path)`` picks the reader by extension (``.pbtxt``, ``.txt``, ``.py``, ``.json``, each
also gzip-compressed as ``<name>.<ext>.gz``, the way the ledger stores them) and, for other
names, by content. FX graphs saved as text read too: a ``graph():`` listing (as
TorchAir's DEBUG log prints it, :mod:`airctl.io.fx_listing`) and ``print_readable`` code (its
TORCH_COMPILE_DEBUG stages and reduce-overhead ``.py`` dumps, :mod:`airctl.io.fx_code`), whatever
their extension. Whatever goes wrong (binary data, bad encoding, truncation, a
malformed entry) surfaces as :class:`airctl.errors.GraphReadError` with the file and, wherever
the format allows, the line. No other exception escapes (tests fuzz this).

TorchAir's text dumps are read in chunks (:mod:`airctl.io.text_scan`): a ``.pbtxt`` node by node,
a ``.txt`` with string literals over 1 MB cut short before protobuf parses it, so memory stays
bounded whatever a dump holds (a test reads a 200 MB attribute under a 1 GB address-space limit).

>>> g = read_graph("fixtures/dumps/stream/optimized.pbtxt")        # doctest: +SKIP
>>> write_graph(g, "txt")[:20]                                      # doctest: +SKIP
'name: "optimized"\\nop '
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph, Node
from airctl.graph.refs import Refs, offer
from airctl.io.compressed import HEAD, logical_stem, logical_suffix, open_bytes
from airctl.io.fx_code import is_fx_code, parse_fx_code
from airctl.io.fx_listing import is_fx_listing, parse_fx_listing
from airctl.io.gc_pause import gc_paused
from airctl.io.json_io import parse_json, write_json
from airctl.io.py_dump import is_torchair_py_dump, parse_py_dump

# GE's text formats import protobuf and GE's schema (about 40 ms): their modules are imported at the first
# call, so only a command that reads or writes them pays that, not `airctl diff`/`check` of airctl graph JSON
WRITERS: dict[str, Callable[[Graph], str]] = {
    "json": lambda g: write_json(g),
    "pbtxt": lambda g: import_module("airctl.io.pbtxt").write_pbtxt(g),
    "txt": lambda g: import_module("airctl.io.ge_text").write_txt(g),
}
EXTENSIONS = {".json": "json", ".pbtxt": "pbtxt", ".txt": "txt", ".py": "py"}


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode(data: bytes, origin: str, partial: bool = False) -> str:
    """UTF-8 text of a graph file, or a GraphReadError naming the line of the first bad byte.
    ``partial``: ``data`` is the file's beginning only (a character may be cut at its end)."""
    nul = data.find(b"\0")
    if nul >= 0:
        hint = "graph dumps are text; a binary GE model (.pb/.om) cannot be read, dump it as txt or pbtxt"
        raise GraphReadError("binary data (NUL byte)", file=origin, line=_line_of(data, nul), hint=hint)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        if partial and e.start >= len(data) - 3 and e.reason.startswith("unexpected end"):
            return decode(data[:e.start], origin)
        raise GraphReadError(f"not UTF-8 text ({e.reason} at byte {e.start})", file=origin,
                             line=_line_of(data, e.start), hint="graph files are UTF-8 text") from e
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise GraphReadError("empty file", file=origin, line=1, hint="the dump was not written completely")
    return text


def sniff(text: str) -> str | None:
    """The format of a graph file's text, from its first meaningful characters."""
    body = "\n".join(line for line in text.split("\n") if not line.startswith("# airctl-graph:")).lstrip()
    if body.startswith("{"):
        return "json"
    if body.startswith("node"):
        return "pbtxt"
    if is_torchair_py_dump(text):
        return "py"
    if is_fx_listing(body):
        return "fx-listing"
    if is_fx_code(body):
        return "fx-code"
    if body.startswith(("name:", "op {", "op{", "attr {", "graph {")):
        return "txt"
    return None


PARSERS: dict[str, Callable[[str, str, str], Graph]] = {
    "pbtxt": lambda text, origin, name: import_module("airctl.io.pbtxt").parse_pbtxt(text, origin, name),
    "txt": lambda text, origin, name: import_module("airctl.io.ge_text").parse_txt(text, origin, name),
    "py": parse_py_dump,
    "json": lambda text, origin, name: parse_json(text, origin),
    "fx-listing": lambda text, origin, name: parse_fx_listing(text, origin, name),
    "fx-code": parse_fx_code,
}


def _line_of_text(text: str | None, needle: str) -> int | None:
    """The 1-based line where ``needle`` first appears in ``text`` (quoted first), if it does."""
    if not text:
        return None
    at = text.find(f'"{needle}"')
    if at < 0:
        at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def check_graph(graph: Graph, origin: str, text: str | None = None,
                ref_lines: dict[tuple[str, str], int] | None = None, typed: bool = False,
                keep_refs: bool = False) -> Graph:
    """Reject what would break later consumers: wrong field types (unless ``typed``: the reader checked
    them, as the JSON reader does), duplicate names, inputs naming no node (their line from
    ``ref_lines`` (node, input) or found in ``text``). ``keep_refs``: the references are resolved
    through the table the graph's readers use (:class:`Refs`: the report, the verifier), which is
    then handed to the first of them (:func:`~airctl.graph.refs.offer`) instead of made again."""
    nodes = graph.nodes
    if not typed:
        for i, node in enumerate(nodes):
            if not _well_formed(node):
                raise GraphReadError(f"node #{i} has fields of the wrong type", file=origin,
                                     node=node.name if isinstance(node.name, str) else None)
    seen = {node.name: i for i, node in enumerate(nodes)}  # name -> position
    if len(seen) != len(nodes):
        once: set[str] = set()
        for node in nodes:
            if node.name in once:
                raise GraphReadError(f"duplicate node name {node.name!r}", file=origin, node=node.name)
            once.add(node.name)
    if not isinstance(graph.name, str) or not isinstance(graph.dialect, str) or not isinstance(graph.attrs, dict):
        raise GraphReadError("graph name/dialect/attrs have the wrong type", file=origin)
    if not keep_refs:
        _no_dangling(nodes, seen, origin, text, ref_lines, plain=graph.dialect != "ge")
        return graph
    refs = Refs(seen, graph.dialect)
    data_in, ctrl_in = refs.inputs(graph)  # -1: no such node, or an absent optional input ("")
    _no_dangling([node for node, ins, ctrl in zip(nodes, data_in, ctrl_in, strict=True)
                  if -1 in ins or (ctrl and -1 in ctrl)], seen, origin, text, ref_lines)
    offer(graph, refs)
    return graph


def _no_dangling(nodes: list[Node], seen: dict[str, int], origin: str, text: str | None,
                 ref_lines: dict[tuple[str, str], int] | None, plain: bool = False) -> None:
    """Every input names a node of the graph (``plain``: references are mostly plain names, as FX's are),
    else a GraphReadError naming the node and, where known, the line."""
    producer_of = Node.producer
    for node in nodes:
        for ref in (*node.inputs, *node.control_inputs):
            if plain and ref in seen:  # FX's plain name, not parsed (a call per reference: 0.1 s of `check` at 200k)
                continue
            head, sep, tail = ref.rpartition(":")
            if sep and head in seen and tail.isdigit() and ref[0] != "^":  # the common "Name:0", as producer() reads it
                continue
            producer = producer_of(ref)
            if producer and producer not in seen and ref not in seen:  # "", ":0": an absent optional input
                line = (ref_lines or {}).get((node.name, ref)) or _line_of_text(text, ref)
                raise GraphReadError(
                    f"node {node.name!r} reads {ref!r}, but the graph has no node named {producer!r}", file=origin,
                    line=line, node=node.name,
                    hint="the file looks truncated or hand-edited: every input must name a node of the same graph")


def _well_formed(node: Node) -> bool:
    return (isinstance(node.name, str) and isinstance(node.op, str)
            and isinstance(node.inputs, list) and all(isinstance(r, str) for r in node.inputs)
            and isinstance(node.control_inputs, list) and all(isinstance(r, str) for r in node.control_inputs)
            and (node.stream is None or isinstance(node.stream, str))
            and (node.source is None or isinstance(node.source, str))
            and (node.module is None or isinstance(node.module, str))
            and isinstance(node.kind, str) and isinstance(node.attrs, dict) and isinstance(node.meta, dict))


def parse_graph(text: str, fmt: str, origin: str = "<graph>", name: str = "graph", keep_refs: bool = False) -> Graph:
    """A graph from text in a known format (``pbtxt``, ``txt``, ``py``, ``json``)."""
    if fmt not in PARSERS:
        raise GraphReadError(f"unknown graph format {fmt!r}", file=origin, hint=f"formats: {', '.join(PARSERS)}")
    try:
        with gc_paused():
            graph = PARSERS[fmt](text, origin, name)
    except GraphReadError:
        raise
    except RecursionError as e:
        raise GraphReadError("nesting too deep", file=origin, line=1) from e
    # from_dict checks every field's type
    return check_graph(graph, origin, text, typed=fmt == "json", keep_refs=keep_refs)


def read_graph(path: Path | str, keep_refs: bool = False) -> Graph:
    """Read a graph file, choosing the reader by extension, else by content. ``keep_refs``: see
    :func:`check_graph` (for a caller that reads the graph as it is, unedited)."""
    path = Path(path)
    origin = str(path)
    try:
        stream = open_bytes(path)
    except IsADirectoryError as e:
        raise GraphReadError("is a directory, not a graph file", file=origin) from e
    except OSError as e:
        raise GraphReadError(f"cannot read: {e.strerror or e}", file=origin) from e
    with stream:
        try:
            head = stream.read(HEAD)
        except OSError as e:
            raise GraphReadError(f"cannot read: {e.strerror or e}", file=origin) from e
        text = decode(head, origin, partial=len(head) == HEAD)
        fmt = EXTENSIONS.get(logical_suffix(path))
        if fmt in ("py", "txt", None) and sniff(text) in ("fx-listing", "fx-code"):
            fmt = sniff(text)  # FX graphs saved as text: a listing, or print_readable code
        if fmt == "py" and not is_torchair_py_dump(text):
            raise GraphReadError("this .py file is not a TorchAir graph dump (no ge.<Op>(...) calls)", file=origin,
                                 line=1, hint="model scripts are compiled, not read: `airctl compile model.py`")
        if fmt == "txt" and sniff(text) == "pbtxt":
            fmt = "pbtxt"  # some tools name TF-style text .txt
        if fmt is None:
            fmt = sniff(text)
        if fmt is None:
            raise GraphReadError("unrecognised graph file", file=origin, line=1,
                                 hint="expected a TorchAir dump (.pbtxt, .txt, .py), an FX `graph():` listing or "
                                      "print_readable code, or an airctl graph .json")
        stream.seek(3 if head.startswith(b"\xef\xbb\xbf") else 0)  # after a byte-order mark
        if fmt == "pbtxt":
            return _read_pbtxt(stream, origin, logical_stem(path))
        if fmt == "txt":
            from airctl.io.ge_text import HINT as TXT_HINT
            from airctl.io.text_scan import shortened

            text, cut = shortened(stream, origin, hint=TXT_HINT)
            graph = parse_graph(text, fmt, origin, logical_stem(path))
            if cut:
                graph.attrs.setdefault("airctl_elided", [{"line": line, "bytes": n} for line, n in cut])
            return graph
        return parse_graph(decode(stream.read(), origin), fmt, origin, logical_stem(path), keep_refs)


def _read_pbtxt(stream: Any, origin: str, name: str) -> Graph:
    from airctl.io.pbtxt import read_pbtxt_stream

    ref_lines: dict[tuple[str, str], int] = {}
    try:
        with gc_paused():
            graph = read_pbtxt_stream(stream, origin, name, ref_lines)
    except RecursionError as e:
        raise GraphReadError("nesting too deep", file=origin, line=1) from e
    return check_graph(graph, origin, ref_lines=ref_lines)


def write_graph(graph: Graph, path_or_type: Path | str) -> str:
    """The graph as ``json``/``pbtxt``/``txt`` text; given a file path, also writes it (format from extension)."""
    target = str(path_or_type)
    if target in WRITERS:
        return WRITERS[target](graph)
    path = Path(target)
    fmt = EXTENSIONS.get(path.suffix.lower())
    if fmt not in WRITERS:
        from airctl.errors import AirctlError

        raise AirctlError(f"cannot write graphs as {path.suffix or target!r}", file=target,
                          hint=f"write one of: {', '.join(WRITERS)} (or a file ending .json/.pbtxt/.txt)")
    text = WRITERS[fmt](graph)
    path.write_text(text, encoding="utf-8")
    return text
