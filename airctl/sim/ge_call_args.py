"""The checks of TorchAir's C++ ``TorchNpuGraphBase`` (``run``, ``auto_tune``, ``compile``), for the stand-in.

TorchAir's extension parses ``run((inputs, assigned_outputs, stream))`` and
``auto_tune((example_inputs, stream))`` before it touches the graph (``torchair/core/torchair.cpp``:
``ParseListTensors``, ``ParseListOptionalTensors``, ``ParseStream``), and TorchAir's tests assert on
those messages (``element 0 is None``, ``element 0 is not a Tensor``). The stand-in
(:mod:`airctl.sim.torchair_core`) runs the same checks here, with the same wording, so a caller that
passes a wrong argument gets the error an NPU would give instead of a failure deeper in sim.
"""

from __future__ import annotations

from typing import Any

RUN_SIGNATURE = "Run(TensorList inputs, c10::List<c10::optional<Tensor>> outputs, c10::Stream)"
AUTO_TUNE_SIGNATURE = "AutoTune(TensorList example_inputs, c10::Stream)"


def _is_tensor(obj: Any) -> bool:
    """pybind's ``THPVariable_CheckExact``: a ``torch.Tensor`` or ``torch.nn.Parameter`` itself."""
    import torch

    return type(obj) in (torch.Tensor, torch.nn.Parameter)


def tensor_list(obj: Any, *, optional: bool = False) -> list[Any]:
    """A list or tuple of tensors (``None`` allowed where ``optional``), else TorchAir's RuntimeError."""
    if not isinstance(obj, list | tuple):
        raise RuntimeError("not a list or tuple")
    for idx, item in enumerate(obj):
        if item is None:
            if optional:
                continue
            raise RuntimeError(f"element {idx} is None")
        if not _is_tensor(item):
            raise RuntimeError(f"element {idx} is not a Tensor")
    return list(obj)


def _stream(obj: Any) -> Any:
    import torch

    if obj is None or isinstance(obj, torch.Stream) or hasattr(obj, "stream_id"):
        return obj  # torch.Stream, or the stand-in torch_npu's Stream
    raise RuntimeError(f"expected Stream object. Got '{type(obj).__name__}'")


def _unpack(args: Any, count: int, signature: str) -> tuple:
    if not isinstance(args, tuple) or len(args) != count:
        raise RuntimeError(f"Parse arg with signature {signature} failed")
    return args


def run_args(args: Any) -> tuple[list[Any], list[Any], Any]:
    """``(inputs, assigned_outputs, stream)`` of a ``run`` call, checked as TorchAir's C++ checks them
    (inputs, then assigned outputs; ``Run`` does not look at the stream)."""
    inputs, assigned, stream = _unpack(args, 3, RUN_SIGNATURE)
    return tensor_list(inputs), tensor_list(assigned, optional=True), stream


def auto_tune_args(args: Any) -> tuple[list[Any], Any]:
    """``(example_inputs, stream)`` of an ``auto_tune`` call, checked as TorchAir's C++ checks them."""
    example_inputs, stream = _unpack(args, 2, AUTO_TUNE_SIGNATURE)
    stream = _stream(stream)  # the C++ parses the stream first
    return tensor_list(example_inputs), stream


def _dims(shapes: Any) -> str:
    return "[" + ", ".join("[" + ", ".join(str(d) for d in s) + "]" for s in shapes) + "]"


def net_output_shapes(serialized: bytes) -> list[list[int]] | None:
    """The shapes a static GE graph's ``NetOutput`` receives (GE's compile summary of that graph);
    None when the graph is dynamic (a ``-1``/``-2`` dim in a ``Data`` output or a graph output),
    where GE's summary gives no shapes to compare."""
    from airctl.io.ge_schema import message_class

    model = message_class("ModelDef").FromString(bytes(serialized))  # what TorchAir's GeGraph serializes
    if not model.graph:
        return None
    graph = model.graph[0]
    shapes: list[list[int]] | None = None
    for op in graph.op:
        descs = op.output_desc if op.type == "Data" else op.input_desc if op.type == "NetOutput" else ()
        dims = [list(d.shape.dim) for d in descs]
        if any(x < 0 for s in dims for x in s):
            return None
        if op.type == "NetOutput":
            shapes = dims
    return shapes


def check_net_output(serialized: bytes | None, executor_type: int | None, fx_shapes: Any) -> None:
    """TorchAir's compile-time check of a static graph on the NPU executor (``concrete_graph.cpp``,
    ``CheckNetOutputShape``): the GE graph's outputs have the FX graph's count, ranks and dims."""
    if serialized is None or executor_type != 1 or fx_shapes is None:  # ExecutorType.NPU
        return
    ge_shapes = net_output_shapes(serialized)
    if ge_shapes is None:
        return
    fx = [list(s) for s in fx_shapes]
    summary = f"FX graph NetOutput shapes is : {_dims(fx)}, Ascend GE graph NetOutput shapes is : {_dims(ge_shapes)}"
    if len(fx) != len(ge_shapes):
        raise RuntimeError(f"The number of Ascend GE graph NetOutput: {len(ge_shapes)} is not equal to FX graph "
                           f"NetOutput: {len(fx)}. {summary}")
    for out, ge in zip(fx, ge_shapes, strict=True):
        if len(out) != len(ge):
            raise RuntimeError(f"The dim size of Ascend GE graph NetOutput: {_dims([ge])[1:-1]} is not equal to FX "
                               f"graph NetOutput: {_dims([out])[1:-1]}. {summary}")
        if any(a != b for a, b in zip(out, ge, strict=True) if a != -1 and b != -1):
            raise RuntimeError(f"The dim of Ascend GE graph NetOutput: {_dims([ge])[1:-1]} is not equal to FX "
                               f"graph NetOutput: {_dims([out])[1:-1]}. {summary}")
