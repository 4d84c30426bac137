"""GE's build under sim: automatic multi-stream (``ge.autoMultistreamParallelMode``) applied to a loaded graph.

TorchAir passes ``config.ge_config.multistream_parallel_mode`` to GE as the local (graph) option
``ge.autoMultistreamParallelMode``; the stand-in extension receives it with the graph in ``load``.
At ``compile`` — GE's build — :func:`build` allocates the graph's streams
(:func:`airctl.graph.ge_streams.allocate_streams`) and makes the graph GE's build dump would show
(:func:`airctl.graph.ge_built.built_graph`): the ledger's ``ge-build`` stage. ``WeightedLoadBalance``
reads op times from the msprof ``op_summary.csv`` that ``MINIDAG_PROFILING_PATH`` names, as GE
does: only a path ending in ``.csv``; an unreadable file leaves the op times out (GE falls back to
``LoadBalance`` then, and so does sim), with a warning naming it. A graph with dynamic shapes gets
streams only with ``ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1``, as CANN documents; otherwise a warning
says it stays on one stream.

Then every run of the graph executes TorchAir's FX graph with each FX node on its GE op's stream
(:func:`scoped_module`: ``air.scope_enter``/``scope_exit`` around it, as a user's scope would put
it), so the executor's lanes, races and ``airctl profile`` see GE's streams; in max-autotune the
executor synchronises every cross-stream data edge, as GE's events do, so the output is eager's.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.graph.ge_built import built_graph, fx_streams
from airctl.graph.ge_streams import Allocation, GraphOrderError, StreamSpecError, allocate_streams
from airctl.graph.model import STREAM_LABEL, Graph

OPTION = "ge.autoMultistreamParallelMode"
PROFILING_ENV = "MINIDAG_PROFILING_PATH"
DYNAMIC_ENV = "ENABLE_DYNAMIC_SHAPE_MULTI_STREAM"
_log = logging.getLogger("airctl.sim")


@dataclass
class GeBuild:
    """What GE's build made of one loaded graph."""

    graph: Graph  # the ge-build stage: ops with their streams, Send/Recv events
    allocation: Allocation
    fx_streams: dict[str, str | None]  # FX node -> GE stream name (None: the main stream)
    notes: list[str] = field(default_factory=list)
    scoped: dict[int, Any] = field(default_factory=dict)  # id(FX GraphModule) -> (module, its scoped copy)


def op_times(path_text: str | None) -> tuple[dict[str, float], list[str]]:
    """Mean device time (µs) per op name of the ``op_summary.csv`` named, and what went wrong reading it."""
    if not path_text:
        return {}, []
    if not path_text.endswith(".csv"):
        return {}, [f"{PROFILING_ENV} only takes a .csv file (msprof's op_summary_*.csv), not {path_text!r}: ignored"]
    from airctl.profile.ascend.kernels import read_kernels
    from airctl.profile.ascend.model import Issues

    path = Path(path_text)
    try:
        tasks, _ = read_kernels(path, Issues())
    except Exception as e:  # noqa: BLE001 - GE logs the failure and builds without op times
        return {}, [f"{PROFILING_ENV}={path_text}: not read ({e}); no op times used"]
    sums: dict[str, list[float]] = {}
    for task in tasks:
        entry = sums.setdefault(task.name, [0.0, 0.0])
        entry[0] += task.dur_ns / 1000.0
        entry[1] += 1
    return {name: total / count for name, (total, count) in sums.items()}, []


def build(serialized: bytes | None, options: dict[str, str], name: str) -> GeBuild | None:
    """GE's build of a loaded graph when automatic multi-stream is on (None when it is off)."""
    spec = options.get(OPTION)
    if spec is None or serialized is None:
        return None
    from airctl.sim.ge_graph_runner import parse_graph

    _, graph = parse_graph(serialized, name)
    if _dynamic(graph) and os.environ.get(DYNAMIC_ENV) != "1":
        _log.warning("sim: %s has dynamic shapes: GE allocates its streams automatically there only with %s=1 "
                     "(CANN's documentation); it stays on one stream", graph.name, DYNAMIC_ENV)
        return None
    times, notes = op_times(os.environ.get(PROFILING_ENV)) if spec.strip().startswith("Weighted") else ({}, [])
    try:
        alloc = allocate_streams(graph, spec, times)
    except StreamSpecError as e:
        raise RuntimeError(f"sim: GE build of {graph.name} failed: {e}. Fix: set "
                           "config.ge_config.multistream_parallel_mode (--option "
                           "ge_config.multistream_parallel_mode=LoadBalance:2) to one of those forms") from e
    except GraphOrderError as e:
        raise RuntimeError(f"sim: GE build of {graph.name} failed: {e}") from e
    if spec.strip().startswith("Weighted") and not alloc.weighted:
        notes.append(f"{graph.name}: no op of the graph has a time in {PROFILING_ENV}: LoadBalance used, as GE does")
    for note in notes:
        _log.warning("sim: %s", note)
    built = built_graph(graph, alloc)
    return GeBuild(built, alloc, fx_streams(built), notes)


def _dynamic(graph: Graph) -> bool:
    """Whether an op's output shape has an unknown (negative) dimension."""
    return any(isinstance(d, int) and d < 0 for n in graph.nodes for out in n.meta.get("outputs") or []
               for d in out.get("shape") or [])


def scoped_module(ge_build: GeBuild, gm: Any) -> Any:
    """``gm`` with each FX node on its GE stream (a copy, made once per module); nodes already inside a
    user's stream scope keep it (GE keeps labelled ops on their stream)."""
    cached = ge_build.scoped.get(id(gm))
    if cached is not None and cached[0] is gm:
        return cached[1]
    import torch
    import torch.fx

    from airctl.graph.roles import Role, role_of_op
    from airctl.io.fx_reader import target_name

    enter, leave = torch.ops.air.scope_enter.default, torch.ops.air.scope_exit.default
    graph = torch.fx.Graph()
    env: dict[Any, Any] = {}
    current: str | None = None
    depth = 0  # the user's own scopes open around this node
    streams: dict[str, str | None] = {}
    for node in gm.graph.nodes:
        role = role_of_op(target_name(node.target) if node.op == "call_function" else node.op, node.op)
        if depth == 0 and role is not Role.INPUT:
            stream = None  # records, waits, the output and the user's scopes: on the main stream
            if role.is_op:
                stream = ge_build.fx_streams.get(node.name)
                if node.name not in ge_build.fx_streams:  # no GE op of its own (getitem): its input's stream
                    stream = next((streams[a.name] for a in node.all_input_nodes if a.name in streams), None)
                streams[node.name] = stream
            if stream != current:
                if current is not None:
                    graph.call_function(leave, ())
                if stream is not None:
                    graph.call_function(enter, ([STREAM_LABEL], [stream]))
                current = stream
        if role is Role.SCOPE_ENTER:
            depth += 1
        elif role is Role.SCOPE_EXIT:
            depth = max(0, depth - 1)
        env[node] = graph.node_copy(node, lambda n: env[n])
    scoped = torch.fx.GraphModule(gm, graph)
    ge_build.scoped[id(gm)] = (gm, scoped)
    return scoped

