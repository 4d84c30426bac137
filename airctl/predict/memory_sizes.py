"""The tensors of a plan's graph, as the NPU allocator sees them: blocks, aliases and readers.

:mod:`.memory` times each tensor's life; this module says which tensors there are and how big
each block is (docs/memory.md "Sizes" and "Which nodes allocate"):

- a block is ``round_up(bytes + 32, 512)`` (no block for 0 bytes): torch_npu's
  ``NPUCachingAllocator`` pads every request by ``AddPadSize()`` (32 bytes on 910B-class chips)
  and rounds it to ``kMinBlockSize`` (512) in ``round_size``;
- a kernel allocates one block per output tensor its node records (FX ``meta["tensors"]``, GE
  ``meta["outputs"]``); views, ``getitem``, GE's shape-only ops and in-place ops (an op whose
  name ends in ``_``: ``add_``, ``copy_``, what TorchAir's reinplace pass writes) and
  ``wait_tensor`` allocate nothing: their result is (a view of) their first input;
- graph inputs are ``input`` or ``param`` (:func:`input_kind`), the tensors the output node
  returns are ``output``, the rest ``intermediate``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from airctl.execute.ge_ops import PROTO_DTYPES
from airctl.graph.model import Graph, Node
from airctl.graph.roles import Role, role_of
from airctl.predict.estimate import DTYPE_BYTES
from airctl.predict.plan import GE_FREE, KERNEL, MARKER, ReplayPlan, is_view_op
from airctl.verify.plan import node_args

PAD_BYTES = 32  # AddPadSize() below Ascend950 (910B/910C/310P); 0 on Ascend950 with new CANN
BLOCK_BYTES = 512  # kMinBlockSize
ITEM_BYTES = {**DTYPE_BYTES, "uint16": 2, "uint32": 4, "uint64": 8, "complex128": 16, "float8_e5m2": 1,
              "float8_e4m3fn": 1, "float8_e8m0fnu": 1, "int4": 1}
GE_INPUTS = ("Data", "RefData")
GE_PARAMS = ("Const", "Constant", "Variable")
# placeholder names that are module attributes: torch.export lifts parameters as p_*, buffers as
# b_*; Dynamo names them l_self_modules_<path>_parameters_<name>_ (older: l__self___<path>)
_PARAM_NAME = re.compile(r"^(p_|b_|l__self___)|_(parameters|buffers)_", re.IGNORECASE)
PARAM_META = ("parameter", "buffer", "param", "constant")
ALIAS_OPS = ("wait_tensor",)  # returns its input (air.wait_tensor, _c10d_functional.wait_tensor)


def block_bytes(nbytes: int, pad: int = PAD_BYTES) -> int:
    """The block the allocator hands out for ``nbytes``.

    >>> block_bytes(4), block_bytes(480), block_bytes(481), block_bytes(512), block_bytes(0)
    (512, 512, 1024, 1024, 0)
    """
    if nbytes <= 0:
        return 0
    return -(-(nbytes + pad) // BLOCK_BYTES) * BLOCK_BYTES


@dataclass
class Tensor:
    id: int
    node: str  # the node that made it
    out: int  # which of its outputs
    bytes: int  # the block
    kind: str  # input, param, intermediate or output
    producer: int | None  # task index (None: a graph input)
    readers: list[int] = field(default_factory=list)  # task indices, program order

    @property
    def name(self) -> str:
        return self.node if self.out == 0 else f"{self.node}[{self.out}]"


@dataclass
class GraphTensors:
    tensors: list[Tensor]
    unsized: list[str]  # kernels whose outputs have no (static) shape: counted as 0 bytes


def input_kind(node: Node) -> str:
    """``param`` for a parameter, buffer or constant, else ``input`` (docs/memory.md states the rule).

    >>> input_kind(Node("p_fc_weight", "placeholder", kind="placeholder"))
    'param'
    >>> input_kind(Node("l_self_modules_fc_parameters_weight_", "placeholder", kind="placeholder"))
    'param'
    >>> input_kind(Node("arg0_1", "placeholder", kind="placeholder"))
    'input'
    """
    said = node.meta.get("input_kind") or node.meta.get("kind")
    if said is not None:
        return "param" if str(said).lower() in PARAM_META else "input"
    if node.kind == "get_attr" or node.op in GE_PARAMS or _PARAM_NAME.search(node.name):
        return "param"
    return "input"


def tensor_bytes(desc: dict[str, Any]) -> int | None:
    """Bytes of one recorded tensor (``{"shape": [...], "dtype": ...}``); None when not static."""
    shape, dtype = desc.get("shape"), desc.get("dtype")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        return None
    name = PROTO_DTYPES.get(dtype) if isinstance(dtype, int) else str(dtype or "float32").removeprefix("torch.")
    item = ITEM_BYTES.get(name or "")
    if item is None or any(d < 0 for d in shape):
        return None
    return math.prod(shape, start=item)


def _descs(node: Node, dialect: str) -> list[dict[str, Any]]:
    descs = node.meta.get("outputs" if dialect == "ge" else "tensors") or []
    return [d for d in descs if isinstance(d, dict)]


def _base_op(op: str) -> str:
    parts = op.split(".")
    return parts[1] if len(parts) >= 2 else op


def _is_alias(op: str, dialect: str) -> bool:
    """Whether an op's result is its first input's storage (a view, in place, or a pass-through)."""
    if dialect == "ge":
        return op in GE_FREE and op not in (*GE_INPUTS, *GE_PARAMS, "NetOutput", "NoOp")
    base = _base_op(op)
    return is_view_op(op) or (base.endswith("_") and not base.endswith("__")) or base in ALIAS_OPS


def _refs(node: Node, dialect: str) -> list[tuple[str, int | None]]:
    """(producer, output index or None for all) of each data input."""
    if dialect != "ge":  # FX inputs are producer names
        return [(ref, None) for ref in node.inputs]
    out: list[tuple[str, int | None]] = []
    for ref in node.inputs:
        if not ref or ref.startswith("^") or ref.endswith(":-1"):
            continue
        name = Node.producer(ref)
        idx = ref[len(name) + 1:] if len(ref) > len(name) else ""
        out.append((name, int(idx) if idx.isdigit() else None))
    return out


def graph_tensors(plan: ReplayPlan) -> GraphTensors:
    """Every block the plan's graph holds, with each block's readers (task indices, through views)."""
    graph: Graph | None = plan.graph_model
    if graph is None:
        return GraphTensors([], [])
    dialect = graph.dialect
    task_of = {t.name: t.index for t in plan.tasks}
    tensors: list[Tensor] = []
    unsized: list[str] = []
    views: dict[str, list[int]] = {}  # node name -> the tensors its value is (or views)
    outputs: list[tuple[str, int | None]] = []
    alias_ops: dict[str, bool] = {}  # op -> _is_alias (a graph has few distinct ops)
    for node in _in_task_order(graph, task_of):
        i = task_of.get(node.name, -1)
        if i >= 0 and plan.tasks[i].kind == MARKER and _base_op(node.op) not in ALIAS_OPS:
            continue  # records, waits: no tensor
        role = role_of(node)
        refs = _refs(node, dialect)
        if role is Role.OUTPUT or (dialect == "ge" and node.op == "NetOutput"):
            outputs.extend(refs)
            continue
        touches = i >= 0 and plan.tasks[i].kind == KERNEL  # views and markers read no memory
        seen: set[int] = set()
        for name, idx in refs if touches else ():  # what this kernel reads
            for tid in _resolve(views, name, idx, tensors):
                if tid not in seen and tensors[tid].producer != i:
                    seen.add(tid)
                    tensors[tid].readers.append(i)
        if role is Role.INPUT or node.op in (*GE_INPUTS, *GE_PARAMS):
            kind = input_kind(node)
            views[node.name] = _new(tensors, node, _descs(node, dialect), kind, None, unsized)
        elif alias_ops[node.op] if node.op in alias_ops else alias_ops.setdefault(node.op, _is_alias(node.op, dialect)):
            name, idx = refs[0] if refs else (None, None)
            if node.op in ("getitem", "_operator.getitem", "operator.getitem"):
                args = node_args(node)
                idx = args[1] if len(args) > 1 and isinstance(args[1], int) else None
            views[node.name] = _resolve(views, name, idx, tensors) if name else []
        elif touches:
            views[node.name] = _new(tensors, node, _descs(node, dialect), "intermediate", i, unsized)
    for name, idx in outputs:
        for tid in _resolve(views, name, idx, tensors):
            if tensors[tid].kind == "intermediate":
                tensors[tid].kind = "output"
    return GraphTensors(tensors, unsized)


def _in_task_order(graph: Graph, task_of: dict[str, int]) -> list[Node]:
    """The graph's nodes in the plan's program order (GE's topological order); others at the end."""
    if graph.dialect == "fx":  # the FX plan's tasks are its nodes in order
        return graph.nodes
    end = len(task_of)
    return sorted(graph.nodes, key=lambda n: task_of.get(n.name, end))


def _new(tensors: list[Tensor], node: Node, descs: list[dict[str, Any]], kind: str, producer: int | None,
         unsized: list[str]) -> list[int]:
    ids = []
    for k, desc in enumerate(descs):
        nbytes = tensor_bytes(desc)
        if nbytes is None:
            if not unsized or unsized[-1] != node.name:  # nodes come one at a time: no repeats
                unsized.append(node.name)
            nbytes = 0
        tensors.append(Tensor(len(tensors), node.name, k, block_bytes(nbytes), kind, producer))
        ids.append(len(tensors) - 1)
    if not descs and producer is not None:
        unsized.append(node.name)
    return ids


def _resolve(views: dict[str, list[int]], name: str | None, idx: int | None, tensors: list[Tensor]) -> list[int]:
    """The tensors ``name`` (output ``idx``) stands for: one output of a multi-output node, else all."""
    ids = views.get(name or "", [])
    if idx is not None and len(ids) > 1 and 0 <= idx < len(ids) and all(tensors[t].node == name for t in ids):
        return [ids[idx]]
    return ids
