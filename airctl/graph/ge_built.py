"""The GE graph as GE's own build leaves it: ops with their stream ids, and GE's events between streams.

TorchAir dumps the graph it hands to GE (``ge-optimized``); streams are assigned later, inside GE's
build. With automatic multi-stream on (:mod:`airctl.graph.ge_streams`), airctl shows that build as
the run's last GE stage, ``ge-build``, the way GE's build dump does:

- every task op carries its stream: ``meta["stream_id"]`` (the ``stream_id`` field of its OpDef
  when written as pbtxt/txt; absent for stream 0, the field's default) and ``stream`` (None for
  stream 0, the main stream; the stream id as text for the others; the label for a user-labelled
  stream);
- each event is a ``Send`` op right after its producer, on the producer's stream, and a ``Recv``
  op right before its consumer, on the consumer's stream, both with the attribute ``event_id``; a
  control edge producer -> Send -> Recv -> consumer carries the order, so lanes, ``check`` and
  ``diff`` read the event as the sync it is.

The graph attribute ``_auto_multistream_mode`` records the mode, and ``_stream_num`` the streams used.

>>> from airctl.graph.ge_streams import allocate_streams
>>> from airctl.graph.model import Graph, Node
>>> g = Graph("g", "ge", [Node("x", "Data"), Node("a", "Abs", ["x:0"]), Node("b", "Exp", ["x:0"]),
...                        Node("c", "Add", ["a:0", "b:0"]), Node("out", "NetOutput", ["c:0"])])
>>> built = built_graph(g, allocate_streams(g, "LoadBalance:2"))
>>> [(n.name, n.stream) for n in built.nodes if n.op != "Data"]
[('a', None), ('b', '1'), ('b_Send_0', '1'), ('c_Recv_0', None), ('c', None), ('out', None)]
"""

from __future__ import annotations

import copy

from airctl.graph.ge_streams import Allocation, is_task
from airctl.graph.model import Graph, Node
from airctl.graph.names import free_name

BUILD_STAGE = "ge-build"
MODE_ATTR = "_auto_multistream_mode"
STREAM_NUM_ATTR = "_stream_num"


def _stream_meta(sid: int) -> dict[str, int]:
    """Stream 0 is the OpDef's default ``stream_id``: a dump does not write it, so neither is it kept."""
    return {"stream_id": sid} if sid else {}


def built_graph(graph: Graph, alloc: Allocation) -> Graph:
    """A copy of ``graph`` with ``alloc``'s streams on its ops and its events as Send/Recv ops."""
    taken = {n.name for n in graph.nodes}
    sends: dict[str, list[Node]] = {}
    recvs: dict[str, list[Node]] = {}
    waits: dict[str, list[str]] = {}
    for event in alloc.events:
        send = Node(free_name(f"{event.src}_Send_{event.id}", taken), "Send", control_inputs=[event.src],
                    attrs={"event_id": event.id}, stream=alloc.names.get(event.src_stream),
                    meta=_stream_meta(event.src_stream))
        recv = Node(free_name(f"{event.dst}_Recv_{event.id}", taken), "Recv", control_inputs=[send.name],
                    attrs={"event_id": event.id}, stream=alloc.names.get(event.dst_stream),
                    meta=_stream_meta(event.dst_stream))
        sends.setdefault(event.src, []).append(send)
        recvs.setdefault(event.dst, []).append(recv)
        waits.setdefault(event.dst, []).append(recv.name)
    nodes: list[Node] = []
    for node in graph.nodes:
        nodes.extend(recvs.get(node.name, []))
        op = copy.deepcopy(node)
        sid = alloc.stream.get(node.name)
        if sid is not None:
            op.meta.update(_stream_meta(sid))
            op.stream = alloc.names.get(sid)
        op.control_inputs.extend(waits.get(node.name, []))
        nodes.append(op)
        nodes.extend(sends.get(node.name, []))
    attrs = {**copy.deepcopy(graph.attrs), MODE_ATTR: alloc.spec, STREAM_NUM_ATTR: len(alloc.names)}
    return Graph(graph.name, graph.dialect, nodes, attrs)


def fx_streams(built: Graph) -> dict[str, str | None]:
    """FX node -> its stream in ``built``, through the ``_fx_tensor_name`` of each GE op's outputs
    (``mm-aten.mm.default.OUTPUT.0`` names FX node ``mm``); FX nodes no GE op names are absent."""
    out: dict[str, str | None] = {}
    for node in built.nodes:
        if not is_task(node) or node.op in ("Send", "Recv"):
            continue
        for fx in node.fx_nodes():
            out.setdefault(fx, node.stream)
    return out
