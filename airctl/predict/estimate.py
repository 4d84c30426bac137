"""``--times estimate``: each kernel's device time from its shapes and dtypes, against a device table.

A roofline, stated in docs/profile.md ("The estimate") and labelled an estimate wherever shown:

    time_us = max(FLOPs / (peak(dtype) × 0.7), bytes / (bandwidth × 0.8)) + 2 µs

- FLOPs are counted for the cube's ops: ``mm``/``addmm``/``bmm``/``baddbmm`` (2·M·N·K per batch),
  convolutions (2 · output elements · input channels per group · kernel size) and attention
  (``_scaled_dot_product_*``, ``npu_fusion_attention``: 4·B·H·L·S·D); every other kernel is bound
  by memory: its bytes are its input and output tensors' (shape × element size);
- 0.7 and 0.8 are the fractions of peak a well-shaped kernel reaches, 2 µs a kernel's fixed cost;
- cores: a cube op spreads over one cube core per 128×128 output tile (per batch), a vector op over
  one vector core per 16 K output elements, at most the device's count of that kind;
- a kernel whose shapes the graph does not record takes the fixed 2 µs (the table's ``*`` row)
  and is named in the notes.

It reads the FX graph (whose nodes carry shapes and dtypes); a GE op finds its FX nodes by name,
as any node-keyed table does.
"""

from __future__ import annotations

import math
from typing import Any

from airctl.devices import Device
from airctl.graph.model import Graph, Node
from airctl.predict.plan import is_view_op
from airctl.predict.times import Row, TimesTable
from airctl.verify.plan import node_args, ref_name

CUBE_EFFICIENCY = 0.7
MEMORY_EFFICIENCY = 0.8
FIXED_US = 2.0
TILE = 128
VECTOR_ELEMS_PER_CORE = 16 * 1024

DTYPE_BYTES = {"float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2, "float64": 8, "double": 8,
               "int64": 8, "long": 8, "int32": 4, "int": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1,
               "complex64": 8}
_MATMUL = ("mm", "addmm", "bmm", "baddbmm", "matmul")
_ATTENTION = ("_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
              "scaled_dot_product_attention", "_scaled_dot_product_attention_math", "npu_fusion_attention",
              "npu_fused_infer_attention_score", "npu_prompt_flash_attention", "npu_incre_flash_attention")


def estimate_table(graphs: list[Graph], dev: Device) -> tuple[TimesTable, list[str]]:
    """A node-keyed table for every kernel of the FX ``graphs``, and the names of those it could not size."""
    table = TimesTable("estimate", "node", label="estimate")
    table.source = f"estimate ({dev.name})"
    table.default = Row(FIXED_US, None, 0)
    unsized: list[str] = []
    for graph in graphs:
        if graph.dialect != "fx":
            continue
        shapes = {n.name: _tensors(n) for n in graph.nodes}
        for node in graph.nodes:
            if node.kind not in ("call_function", "call_method", "call_module") or is_view_op(node.op) or \
                    node.op.startswith(("air.", "npugraph_ex.")):
                continue
            row = estimate_node(node, shapes, dev)
            if row is None:
                unsized.append(node.name)
            else:
                table.rows[node.name] = row
    return table, unsized


def node_work(node: Node, nodes: dict[str, Node]) -> tuple[float, float] | None:
    """(FLOPs, bytes) of ``node`` from the shapes its graph recorded (``nodes``: the graph's nodes by
    name); None when it has none. The replay's bandwidth rule reads it (:mod:`.step`)."""
    outs = _tensors(node)
    if not outs:
        return None
    ins = [t for name in _arg_refs(node) for t in (_tensors(nodes[name]) if name in nodes else [])[:1]]
    return _work(node, ins, outs)


def _work(node: Node, ins: list[tuple[list[int], str]], outs: list[tuple[list[int], str]]) -> tuple[float, float]:
    base = node.op.split(".")[1] if node.op.count(".") >= 1 else node.op
    return _flops(base, ins, outs, node), float(sum(_numel(s) * DTYPE_BYTES.get(d, 4) for s, d in [*ins, *outs]))


def estimate_node(node: Node, shapes: dict[str, list[tuple[list[int], str]]], dev: Device) -> Row | None:
    outs = shapes.get(node.name) or []
    if not outs:
        return None
    ins = [t for name in _arg_refs(node) for t in (shapes.get(name) or [])[:1]]
    dtype = outs[0][1]
    flops, bytes_ = _work(node, ins, outs)
    compute_us = flops / (dev.tflops(dtype) * 1e12 * CUBE_EFFICIENCY) * 1e6 if flops else 0.0
    memory_us = bytes_ / (dev.bandwidth_bytes_s() * MEMORY_EFFICIENCY) * 1e6
    us = max(compute_us, memory_us) + FIXED_US
    if flops:
        out_shape = outs[0][0]
        rows, cols = (out_shape[-2] if len(out_shape) >= 2 else 1), (out_shape[-1] if out_shape else 1)
        batch = _numel(out_shape[:-2]) if len(out_shape) > 2 else 1
        cores = math.ceil(rows / TILE) * math.ceil(cols / TILE) * batch
    else:
        cores = math.ceil(_numel(outs[0][0]) / VECTOR_ELEMS_PER_CORE)
    pool = dev.cube_cores if flops or dev.coupled else dev.vector_cores
    return Row(round(us, 3), float(max(1, min(pool, cores))), 0)


def _flops(base: str, ins: list[tuple[list[int], str]], outs: list[tuple[list[int], str]], node: Node) -> float:
    out = outs[0][0]
    if base in _MATMUL and ins:
        a = ins[1][0] if base in ("addmm", "baddbmm") and len(ins) > 1 else ins[0][0]
        k = a[-1] if a else 1
        return 2.0 * _numel(out) * k
    if base in ("convolution", "conv2d", "conv1d", "conv3d", "_convolution") and len(ins) > 1:
        w = ins[1][0]
        per_out = _numel(w[1:]) if len(w) > 1 else 1
        return 2.0 * _numel(out) * per_out
    if base in _ATTENTION and len(ins) >= 2:
        q, k = ins[0][0], ins[1][0]
        if len(q) >= 2 and len(k) >= 2:
            return 4.0 * _numel(q) * k[-2]
    return 0.0


def _arg_refs(node: Node) -> list[str]:
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, (list, tuple)):
            for v in value:
                walk(v)
        else:
            name = ref_name(value)
            if name is not None:
                out.append(name)

    walk(node_args(node))
    return out or [Node.producer(r) for r in node.inputs]


def _tensors(node: Node) -> list[tuple[list[int], str]]:
    out = []
    for t in node.meta.get("tensors") or []:
        if isinstance(t, dict) and isinstance(t.get("shape"), list):
            shape = [d if isinstance(d, int) else 1 for d in t["shape"]]
            out.append((shape, str(t.get("dtype", "float32")).removeprefix("torch.")))
    return out


def _numel(shape: list[int]) -> int:
    return math.prod(max(int(d), 0) for d in shape)
