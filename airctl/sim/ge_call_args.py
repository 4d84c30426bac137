"""The argument checks of TorchAir's C++ ``TorchNpuGraphBase.run`` / ``auto_tune``, for the stand-in.

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
