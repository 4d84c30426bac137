"""The graph model every reader produces and every writer, renderer, diff and verifier consumes.

Data only: no parsing, no printing, no torch. Two dialects share it:

- ``fx``: one :class:`Node` per FX node. ``op`` is the target (``aten.mm.default``,
  ``air.scope_enter.default``, ``placeholder``, ``output``); ``inputs`` are producer node names
  in argument order; ``attrs`` holds the non-tensor arguments.
- ``ge``: one node per GE OpDef. ``op`` is the GE type (``MatMul``); ``inputs`` are
  ``"producer:index"`` strings; ``control_inputs`` are producer names (``^Abs`` / ``Abs:-1``).

``stream`` is the stream a node runs on (``None`` = the default stream): the innermost
``_user_stream_label`` scope in FX, the ``_user_stream_label`` attribute in GE.

>>> g = Graph("demo", "fx", [Node("x", "placeholder"), Node("mm", "aten.mm.default", inputs=["x", "x"])])
>>> [(e.src, e.dst, e.kind) for e in g.edges()]
[('x', 'mm', 'data'), ('x', 'mm', 'data')]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from airctl.modes import Mode

# the namespaces of stream ops: TorchAir's ``air`` and npugraph_ex's own copies (same op names;
# reference/torchair.md "npugraph_ex"), each mode's Mode.stream_namespace: the model, verifier, executor
# and renderers know both
STREAM_NAMESPACES = tuple(dict.fromkeys(m.stream_namespace for m in Mode))
FX_NAMES = "fx_tensor_names"  # a GE op's meta key: the FX tensors its outputs were converted from
STREAM_LABEL = "_user_stream_label"  # the scope_enter key (FX) and GE op attribute that name a user's stream
# GE attributes TorchAir sets on every op as its inputs' and outputs' names: bookkeeping, which
# listings hide and diffs count apart
GE_NAME_ATTRS = ("_input_name_key", "_input_name_value", "_output_name_key", "_output_name_value")


def is_stream_op(op: str, name: str = "") -> bool:
    """Whether ``op`` is a stream op whose name starts with ``name`` (any stream op for ``""``).

    >>> is_stream_op("npugraph_ex.wait.default", "wait"), is_stream_op("air.record.default", "wait")
    (True, False)
    """
    return any(op.startswith(f"{ns}.{name}") for ns in STREAM_NAMESPACES)


def split_source(source: str | None) -> tuple[str | None, int | None]:
    """A node's ``source`` as (file, line): the line None where the text after the last colon is no
    number, the whole text the file where it has no colon.

    >>> split_source("model.py:7"), split_source("model.py"), split_source(None)
    (('model.py', 7), ('model.py', None), (None, None))
    """
    if not source or ":" not in source:
        return source, None
    file, _, line = source.rpartition(":")
    return file, int(line) if line.isdigit() else None


def stream_word(label: str | None) -> str:
    """A stream as messages name it: ``None`` (a node's stream when it has none) is the default stream."""
    return "the default stream" if label is None else f"stream {label!r}"


@dataclass
class Node:
    name: str
    op: str
    inputs: list[str] = field(default_factory=list)
    control_inputs: list[str] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)
    stream: str | None = None
    source: str | None = None  # "file:line" of the user code that produced the node
    module: str | None = None  # nn.Module path (nn_module_stack), e.g. "layers.0.mlp"
    kind: str = "op"  # fx: placeholder/call_function/output/get_attr/...; ge: op
    meta: dict[str, Any] = field(default_factory=dict)  # shape/dtype/provenance (JSON-able)

    @staticmethod
    def producer(ref: str) -> str:
        """The producing node's name of an input reference (``"MatMul:0"`` -> ``"MatMul"``)."""
        if ref.startswith("^"):
            return ref[1:]
        if ref.endswith(":0"):  # the common case of a GE reference, without the general parse below
            return ref[:-2]
        head, sep, tail = ref.rpartition(":")
        if sep and (tail.lstrip("-").isdigit()):
            return head
        return ref

    def fx_nodes(self) -> list[str]:
        """The FX nodes a GE op was converted from, each once, in the order named: TorchAir's
        ``_fx_tensor_name`` of each output (``meta["fx_tensor_names"]``) up to its first ``-``
        (``mm-aten.mm.default.OUTPUT.0`` names FX node ``mm``)."""
        names = self.meta.get(FX_NAMES) if self.meta else None
        return [fx for fx in dict.fromkeys(str(n).partition("-")[0] for n in names or ()) if fx]


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    kind: str = "data"  # data | control | sync (record -> wait)
    index: int = 0  # position among the destination's inputs of that kind


@dataclass
class Graph:
    name: str
    dialect: str  # "fx" or "ge"
    nodes: list[Node] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index: dict[str, Node] | None = None

    # -- lookup ---------------------------------------------------------------------------
    def _by_name(self) -> dict[str, Node]:
        if self._index is None or len(self._index) != len(self.nodes):
            self._index = {n.name: n for n in self.nodes}
        return self._index

    def node(self, name: str) -> Node:
        return self._by_name()[name]

    def get(self, name: str) -> Node | None:
        return self._by_name().get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name()

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def invalidate(self) -> None:
        """Call after renaming or replacing nodes in place."""
        self._index = None

    # -- derived structure -----------------------------------------------------------------
    def edges(self) -> list[Edge]:
        """Data, control and sync edges, derived from each node's inputs."""
        index = self._by_name()
        out: list[Edge] = []
        for node in self.nodes:
            is_wait = is_stream_op(node.op, "wait")
            for i, ref in enumerate(node.inputs):
                src = Node.producer(ref)
                if src not in index:
                    continue
                kind = "sync" if is_wait and is_stream_op(index[src].op, "record") else "data"
                out.append(Edge(src, node.name, kind, i))
            for i, ref in enumerate(node.control_inputs):
                src = Node.producer(ref)
                if src in index:
                    out.append(Edge(src, node.name, "control", i))
        return out

    def streams(self) -> list[str | None]:
        """Each stream the nodes use, once, in order of first use."""
        return list(dict.fromkeys(n.stream for n in self.nodes))

    def structure(self) -> list[tuple[Any, ...]]:
        """What the graph computes and orders (names, ops, inputs, attributes, streams), without
        provenance (``source``, ``module``, ``meta``): equal for two reads of one graph from
        different files."""
        return [(n.name, n.op, n.kind, n.inputs, n.control_inputs, n.attrs, n.stream) for n in self.nodes]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        mine = (self.name, self.dialect, self.nodes, self.attrs)
        return mine == (other.name, other.dialect, other.nodes, other.attrs)
