"""CPU kernels for GE op types: what sim runs when a GE graph has no FX graph behind it.

A GE graph built with ``torchair.ge``'s API, one reloaded by ``cache_compile``, or a GE dump
imported from an NPU machine names GE op types (``Add``, ``MatMulV2``, ``ConcatV2``), not torch
ops. Each entry of :data:`KERNELS` is one GE type's semantics in torch ops, called as
``kernel(inputs, attrs)``: ``inputs`` in the op's IR order (``None`` for an optional input left
out, TorchAir's ``''``), ``attrs`` the op's attributes as :func:`airctl.io.ge_proto.attr_value`
decodes them. A kernel returns one tensor, or a tuple for an op with several outputs.

Where the table comes from: TorchAir's converters (``torchair/_ge_concrete_graph/ge_converter``)
map aten ops to GE ops. Where a converter is one GE op with the aten op's operands in the same
order (``aten.add.Tensor`` -> ``Add``, ``aten.mm`` -> ``MatMul``, ``aten.split_with_sizes`` ->
``SplitV``), the kernel is that aten op again (:data:`_BINARY`, :data:`_UNARY`); the rest (shape
ops whose operands are tensors in GE and lists in torch, reductions with an ``axes`` input,
``Assign``, ``ViewCopy``, ``Scatter``) are written out below from CANN's IR documentation of
each op, as TorchAir's ``auto_generated_ge_raw_ops.py`` quotes it. GE fusion, precision modes
and formats are not simulated: this is the math of each op on the CPU.

>>> import torch
>>> KERNELS["Add"]([torch.tensor([1.0]), torch.tensor([2.0])], {})
tensor([3.])
>>> KERNELS["ConcatV2"]([torch.ones(1, 2), torch.zeros(1, 2), torch.tensor(0)], {"N": 2}).shape
torch.Size([2, 2])
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

Kernel = Callable[[Sequence[Any], dict[str, Any]], Any]

# ge::DataType (the C enum TorchAir's ``DataType`` mirrors: attributes such as Cast's dst_type)
# and the GE IR proto's DataType (tensor descriptors: Data, Const), both -> torch dtype names
GE_DTYPES = {0: "float32", 1: "float16", 2: "int8", 3: "int32", 4: "uint8", 6: "int16", 7: "uint16",
             8: "uint32", 9: "int64", 10: "uint64", 11: "float64", 12: "bool", 16: "complex64",
             17: "complex128", 27: "bfloat16", 35: "float8_e5m2", 36: "float8_e4m3fn", 37: "float8_e8m0fnu"}
PROTO_DTYPES = {1: "float32", 2: "float16", 3: "int8", 4: "uint8", 5: "int16", 6: "uint16", 7: "int32",
                8: "int64", 9: "uint32", 10: "uint64", 11: "bool", 12: "float64", 16: "complex64",
                17: "complex128", 27: "bfloat16", 34: "float8_e5m2", 35: "float8_e4m3fn", 36: "float8_e8m0fnu"}


def torch_dtype(code: int, proto: bool = False) -> Any:
    """The torch dtype of a GE data type code (``proto``: the IR proto's numbering)."""
    import torch

    name = (PROTO_DTYPES if proto else GE_DTYPES).get(int(code))
    if name is None:
        raise ValueError(f"GE data type {code} ({'proto' if proto else 'ge::DataType'} numbering) has no torch "
                         "dtype sim computes with on the CPU (HiFloat8 and the float4/float6 types have none)")
    return getattr(torch, name)


def _ints(value: Any) -> list[int]:
    """A shape/axes operand: a tensor (GE) or a list (an attribute) -> Python ints."""
    if value is None:
        return []
    if hasattr(value, "tolist"):
        value = value.tolist()
    return [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]


def _int(value: Any, default: int = 0) -> int:
    got = _ints(value)
    return got[0] if got else default


# dtypes GE computes on that torch's CPU kernels do not (no add for uint16, float8): computed in a
# wider dtype and cast back, as GE's kernel returns the input's dtype
_WIDER = {"uint16": "int64", "uint32": "int64", "uint64": "int64", "float8_e8m0fnu": "float32",
          "float8_e4m3fn": "float32", "float8_e5m2": "float32"}


def _widened(fn: Callable[..., Any], *xs: Any) -> Any:
    torch = _torch()
    narrow = [x.dtype for x in xs if isinstance(x, torch.Tensor) and str(x.dtype)[6:] in _WIDER]
    if not narrow:
        return fn(*xs)
    wide = [x.to(getattr(torch, _WIDER[str(x.dtype)[6:]])) if isinstance(x, torch.Tensor) and x.dtype in narrow
            else x for x in xs]
    out = fn(*wide)
    return out if out.dtype == torch.bool else out.to(narrow[0])


def _binary(fn: Callable[[Any, Any], Any]) -> Kernel:
    return lambda ins, attrs: _widened(fn, ins[0], ins[1])


def _unary(name: str) -> Kernel:
    def run(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
        import torch

        return _widened(getattr(torch, name), ins[0])

    return run


_BINARY = {"Add": operator.add, "AddV2": operator.add, "Sub": operator.sub, "Mul": operator.mul,
           "RealDiv": operator.truediv, "Div": operator.truediv, "DivNoNan": operator.truediv,
           "Maximum": lambda a, b: _torch().maximum(a, b), "Minimum": lambda a, b: _torch().minimum(a, b),
           "Pow": operator.pow, "FloorDiv": operator.floordiv, "FloorMod": operator.mod,
           "Less": operator.lt, "LessEqual": operator.le, "Greater": operator.gt, "GreaterEqual": operator.ge,
           "Equal": operator.eq, "NotEqual": operator.ne, "LogicalAnd": lambda a, b: _torch().logical_and(a, b),
           "LogicalOr": lambda a, b: _torch().logical_or(a, b), "BitwiseAnd": operator.and_,
           "BitwiseOr": operator.or_, "SquaredDifference": lambda a, b: (a - b) ** 2}
_UNARY = {"Abs": "abs", "Neg": "neg", "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Rsqrt": "rsqrt",
          "Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Sin": "sin", "Cos": "cos", "Erf": "erf",
          "Floor": "floor", "Ceil": "ceil", "Round": "round", "Reciprocal": "reciprocal", "Square": "square",
          "Sign": "sign", "IsNan": "isnan", "IsFinite": "isfinite", "LogicalNot": "logical_not",
          "Log1p": "log1p", "Expm1": "expm1"}


def _torch() -> Any:
    import torch

    return torch


def _same(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0]


def _copy(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0].clone()


def _cast(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0].to(torch_dtype(attrs["dst_type"]))


def _axpy_v2(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0] + ins[2] * ins[1]  # y = x1 + alpha * x2 (aten.add with alpha)


def _matmul(a_key: str, b_key: str) -> Kernel:
    def run(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
        a, b = ins[0], ins[1]
        if attrs.get(a_key):
            a = a.transpose(-1, -2)
        if attrs.get(b_key):
            b = b.transpose(-1, -2)
        out = a @ b
        bias = ins[2] if len(ins) > 2 else None
        return out + bias if bias is not None else out

    return run


def _reshape(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0].reshape(_ints(ins[1] if len(ins) > 1 else attrs.get("shape")))


def _squeeze(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    axes = _ints(attrs.get("axis"))
    x = ins[0]
    return x.squeeze(tuple(axes)) if axes else x.squeeze()


def _unsqueeze(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    x = ins[0]
    for a in sorted(_ints(attrs.get("axes"))):
        x = x.unsqueeze(a)
    return x


def _transpose(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0].permute(_ints(ins[1] if len(ins) > 1 else attrs.get("perm")))


def _concat_v2(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return _torch().cat(list(ins[:-1]), _int(ins[-1]))


def _concat_d(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return _torch().cat(list(ins), _int(attrs.get("concat_dim")))


def _pack(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    torch = _torch()
    return torch.stack([torch.as_tensor(v) for v in ins], _int(attrs.get("axis")))


def _split_v(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return tuple(ins[0].split(_ints(ins[1]), _int(ins[2])))


def _split(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:  # Split(split_dim, x, num_split)
    return tuple(ins[1].chunk(int(attrs["num_split"]), _int(ins[0])))


def _shape(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return _torch().tensor(list(ins[0].shape), dtype=torch_dtype(attrs.get("dtype", 3)))


def _fill(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    value = ins[1]
    return _torch().full(_ints(ins[0]), value.item(), dtype=value.dtype)


def _empty(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    torch = _torch()
    dtype = torch_dtype(attrs.get("dtype", 0))
    return torch.zeros(_ints(ins[0]), dtype=dtype)  # GE's Empty(init=True) zeroes; sim always does


def _like(value: float) -> Kernel:
    return lambda ins, attrs: _torch().full_like(ins[0], value)


def _broadcast_to(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0].expand(_ints(ins[1])).contiguous()


def _tile(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0].repeat(_ints(ins[1]))


def _range(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    start, limit, delta = (v.item() for v in ins[:3])
    return _torch().arange(start, limit, delta, dtype=ins[0].dtype)


def _gather_v2(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    x, idx, axis = ins[0], ins[1].long(), _int(ins[2])
    return x.index_select(axis, idx.reshape(-1)).reshape(x.shape[:axis % x.dim()] + idx.shape
                                                         + x.shape[axis % x.dim() + 1:])


def _gather(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:  # Gather(x, indices): along axis 0
    return _gather_v2([ins[0], ins[1], 0], attrs)


def _slice(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:  # Slice(x, offsets, size): -1 = to the end
    x = ins[0]
    index = tuple(slice(o, None if s == -1 else o + s) for o, s in zip(_ints(ins[1]), _ints(ins[2]), strict=False))
    return x[index].clone()


def _strided_slice(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    if any(attrs.get(k) for k in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask")):
        raise NotImplementedError("StridedSlice with ellipsis/new-axis/shrink-axis masks")
    x, begin, end, strides = ins[0], _ints(ins[1]), _ints(ins[2]), _ints(ins[3])
    bm, em = int(attrs.get("begin_mask", 0)), int(attrs.get("end_mask", 0))
    index = tuple(slice(None if bm >> d & 1 else b, None if em >> d & 1 else e, s)
                  for d, (b, e, s) in enumerate(zip(begin, end, strides, strict=False)))
    return x[index].clone()


def _reduce(name: str) -> Kernel:
    def run(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
        x = ins[0]
        axes = _ints(ins[1] if len(ins) > 1 else attrs.get("axes"))
        keep = bool(attrs.get("keep_dims", False))
        if not axes:
            return x.clone()  # GE: an empty axes list reduces nothing (noop_with_empty_axes)
        if name == "prod":
            for a in sorted((a % x.dim() for a in axes), reverse=True):
                x = x.prod(a, keepdim=keep)
            return x
        return getattr(x, name)(dim=axes, keepdim=keep)

    return run


def _softmax(log: bool) -> Kernel:
    def run(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
        axes = _ints(attrs.get("axes")) or [-1]
        fn = ins[0].log_softmax if log else ins[0].softmax
        return fn(axes[0])

    return run


def _select(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return _torch().where(ins[0].bool(), ins[1], ins[2])


def _arg_max(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0].argmax(_int(ins[1])).to(torch_dtype(attrs.get("dtype", 3)))


def _top_k(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    values, indices = ins[0].topk(_int(ins[1]), dim=int(attrs.get("dim", -1)),
                                  largest=bool(attrs.get("largest", True)), sorted=bool(attrs.get("sorted", True)))
    return values, indices.int()


def _assign(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    ref, value = ins[0], ins[1]
    if ref.shape != value.shape:  # GE resizes a ref whose shape differs; torch does it explicitly
        ref.resize_(value.shape)
    return ref.copy_(value)


def _as_strided(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0].as_strided(_ints(ins[1]), _ints(ins[2]), _int(ins[3]) if len(ins) > 3 else 0).clone()


def _view_copy(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    dst, src = ins[0], ins[4]
    view = dst.as_strided(_ints(ins[1]), _ints(ins[2]), _int(ins[3]))
    view.copy_(src.as_strided(_ints(ins[5]), _ints(ins[6]), _int(ins[7])))
    return dst


def _scatter(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """Scatter(var, indices, updates, reduce="update", axis): for batch ``b``, the slice of
    ``var[b]`` starting at ``indices[b]`` along ``axis`` takes ``updates[b]`` (KV-cache updates)."""
    if str(attrs.get("reduce", "update")) != "update":
        raise NotImplementedError(f"Scatter with reduce={attrs.get('reduce')!r}")
    var, indices, updates = ins[0], ins[1], ins[2]
    axis = int(attrs.get("axis", 0)) % var.dim()
    for b, start in enumerate(_ints(indices)):
        if start < 0:
            continue  # GE skips negative positions
        if axis == 0:
            var.narrow(0, start, updates.shape[0]).copy_(updates)
            break
        var[b].narrow(axis - 1, start, updates.shape[axis]).copy_(updates[b])
    return var


def _scatter_list(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """ScatterList(var[N], indice, updates, mask, reduce, axis): ``updates[k]`` scattered into ``var[k]``."""
    n = len(ins) - 3
    var, indices, updates = list(ins[:n]), ins[n], ins[n + 1]
    return tuple(_scatter([v, indices, updates[k]], attrs) for k, v in enumerate(var))


def _gelu(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """GE's Gelu is the tanh form (CANN's IR: x / (1 + exp(-sqrt(8/pi) * (x + 0.044715 x^3))));
    GeluV2 says which with ``approximate``."""
    from torch.nn import functional

    approximate = str(attrs.get("approximate", "tanh"))
    return functional.gelu(ins[0], approximate="tanh" if approximate == "tanh" else "none")


def _swish(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return ins[0] * _torch().sigmoid(float(attrs.get("scale", 1.0)) * ins[0])


def _layer_norm_v4(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """LayerNormV4(x, normalized_shape, gamma?, beta?, epsilon) -> (y, mean, rstd); mean and rstd
    keep the normalised dimensions as 1s."""
    x, shape = ins[0], _ints(ins[1])
    dims = tuple(range(x.dim() - len(shape), x.dim()))
    mean = x.mean(dims, keepdim=True)
    rstd = _torch().rsqrt(x.var(dims, unbiased=False, keepdim=True) + float(attrs.get("epsilon", 1e-5)))
    y = (x - mean) * rstd
    gamma, beta = (ins[2] if len(ins) > 2 else None), (ins[3] if len(ins) > 3 else None)
    y = y * gamma if gamma is not None else y
    return (y + beta if beta is not None else y), mean, rstd


def _strided_slice_v2(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """StridedSliceV2(x, begin, end, axes?, strides?): ``begin[i]:end[i]:strides[i]`` on ``axes[i]``."""
    if any(attrs.get(k) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")):
        raise NotImplementedError("StridedSliceV2 with masks")
    x, begin, end = ins[0], _ints(ins[1]), _ints(ins[2])
    axes = _ints(ins[3]) if len(ins) > 3 and ins[3] is not None else list(range(len(begin)))
    strides = _ints(ins[4]) if len(ins) > 4 and ins[4] is not None else [1] * len(begin)
    index: list[Any] = [slice(None)] * x.dim()
    for a, b, e, st in zip(axes, begin, end, strides, strict=False):
        index[a % x.dim()] = slice(b, e, st)
    return x[tuple(index)].clone()


def _index_by_tensor(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """IndexByTensor(x, indices[N], indices_mask): aten.index, ``mask[d]`` saying whether dim d is indexed."""
    mask = _ints(attrs.get("indices_mask")) or [1] * (len(ins) - 1)
    given = iter(ins[1:])
    return ins[0][tuple(next(given) if m else slice(None) for m in mask)]


def _complex(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return _torch().complex(ins[0], ins[1])


def _no_op(ins: Sequence[Any], attrs: dict[str, Any]) -> Any:
    return None


KERNELS: dict[str, Kernel] = {
    **{k: _binary(fn) for k, fn in _BINARY.items()},
    **{k: _unary(fn) for k, fn in _UNARY.items()},
    "Identity": _same, "TensorMove": _copy, "Cast": _cast, "AxpyV2": _axpy_v2,
    "MatMul": _matmul("transpose_x1", "transpose_x2"), "MatMulV2": _matmul("transpose_x1", "transpose_x2"),
    "BatchMatMul": _matmul("adj_x1", "adj_x2"), "BatchMatMulV2": _matmul("adj_x1", "adj_x2"),
    "Reshape": _reshape, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Transpose": _transpose,
    "ConcatV2": _concat_v2, "ConcatD": _concat_d, "Pack": _pack, "SplitV": _split_v, "Split": _split,
    "Shape": _shape, "Fill": _fill, "Empty": _empty, "ZerosLike": _like(0), "OnesLike": _like(1),
    "BroadcastTo": _broadcast_to, "Tile": _tile, "Range": _range, "GatherV2": _gather_v2, "Gather": _gather,
    "Slice": _slice, "StridedSlice": _strided_slice, "ReduceSum": _reduce("sum"), "ReduceMean": _reduce("mean"),
    "ReduceMax": _reduce("amax"), "ReduceMin": _reduce("amin"), "ReduceProd": _reduce("prod"),
    "ReduceSumD": _reduce("sum"), "ReduceMeanD": _reduce("mean"),
    "SoftmaxV2": _softmax(False), "LogSoftmaxV2": _softmax(True), "Select": _select, "SelectV2": _select,
    "ArgMaxV2": _arg_max, "TopK": _top_k, "TopKV2": _top_k, "Assign": _assign, "AsStrided": _as_strided,
    "ViewCopy": _view_copy, "Scatter": _scatter, "ScatterList": _scatter_list, "NoOp": _no_op,
    "Gelu": _gelu, "GeluV2": _gelu, "Swish": _swish, "LayerNormV4": _layer_norm_v4,
    "StridedSliceV2": _strided_slice_v2, "IndexByTensor": _index_by_tensor, "Complex": _complex,
    "ClipByValueV2": lambda ins, attrs: _torch().clamp(ins[0], ins[1], ins[2]),
    "Real": lambda ins, attrs: ins[0].real.clone(), "Imag": lambda ins, attrs: ins[0].imag.clone(),
}

# GE types whose kernel returns a tuple (one item per output)
MULTI_OUTPUT = frozenset({"SplitV", "Split", "TopK", "TopKV2", "ScatterList", "LayerNormV4"})

# GE types the graph runner handles itself (inputs, constants, the output), not kernels
STRUCTURAL = frozenset({"Data", "RefData", "Const", "Constant", "NetOutput"})


def runnable(op_type: str) -> bool:
    return op_type in KERNELS or op_type in STRUCTURAL
