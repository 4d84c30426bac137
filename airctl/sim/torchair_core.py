"""Stand-in for TorchAir's C++ extension ``torchair.core._torchair``.

The real extension talks to CANN's Graph Engine: it loads serialized GE graphs, compiles them
for the NPU and runs them. Here ``load`` keeps the serialized graph and options, ``compile`` is
bookkeeping (and GE's automatic multi-stream when the options ask for it: :mod:`airctl.sim.ge_build`),
and ``run`` hands the call to the *runner* the sim session attached to this graph
for the call in progress (:mod:`airctl.sim.patched_ge_concrete_graph_call`), which executes the
FX graph TorchAir converted (node by node, on CPU) and returns its outputs in GE output order.
A graph with no FX graph behind it (built with ``torchair.ge``, reloaded by ``cache_compile``)
runs from its own GE ops (:mod:`airctl.sim.ge_graph_runner`), in or outside a session.
Everything above this layer — conversion, GE passes, dumps, logging — is TorchAir's own code.

The IR registry (``get_registered_ir_def``) is CANN's op catalogue. Outside a session it answers
"ERROR" (not registered), as a CANN without the op would; a sim session puts
:func:`registered_ir_def` with its own table (``SimContext.ascend_ir``: the ops the user declared,
and keyword-form ``custom_op`` calls, :mod:`airctl.sim.ascend_ir`) in its place.
"""

from __future__ import annotations

import enum
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

from airctl.sim import ge_call_args

MODULE_NAME = "torchair.core._torchair"

# The runner executes one GE graph: (GE inputs, assigned outputs) -> GE outputs.
Runner = Callable[[Sequence[Any], Sequence[Any]], list]
RUNNER_ATTR = "_airctl_runner"


class TorchDataType(enum.IntEnum):
    BOOL = 0
    UINT8 = 1
    INT8 = 2
    INT16 = 3
    UINT16 = 4
    INT32 = 5
    UINT32 = 6
    INT64 = 7
    UINT64 = 8
    BF16 = 9
    FLOAT16 = 10
    FLOAT32 = 11
    FLOAT64 = 12
    COMPLEX64 = 13
    COMPLEX128 = 14


class TorchNpuGraphBase:
    """What TorchAir's ``TorchNpuGraph`` derives from: one GE graph on the device."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.serialized: bytes | None = None
        self.options: dict[str, str] = {}
        self.input_placements: list[int] = []
        self.output_dtypes: list[int] = []
        self.executor_type: int | None = None
        self.hint_shapes: tuple[Any, Any] | None = None
        self.compiled = False
        self.runs = 0
        self.ge_build: Any = None  # GE's build with automatic multi-stream (ge_build.GeBuild), made by compile

    def load(self, serialized, options, input_placements, output_dtypes, executor_type) -> None:
        self.serialized = bytes(serialized)
        self.options = dict(options)
        self.input_placements = list(input_placements)
        self.output_dtypes = list(output_dtypes)
        self.executor_type = executor_type

    def set_hint_shape(self, inputs_shape, output_shapes) -> None:
        self.hint_shapes = (inputs_shape, output_shapes)

    def compile(self) -> None:
        ge_call_args.check_net_output(self.serialized, self.executor_type,
                                      self.hint_shapes[1] if self.hint_shapes else None)
        if not self.compiled:  # GE's build: automatic multi-stream when the graph's options ask for it
            from airctl.sim.ge_build import build

            self.ge_build = build(self.serialized, self.options, self.name)
        self.compiled = True

    def auto_tune(self, args) -> None:  # AOE tuning needs the device; its arguments are checked
        ge_call_args.auto_tune_args(args)

    def run(self, args) -> list:
        inputs, assigned_outputs, _stream = ge_call_args.run_args(args)
        runner: Runner | None = getattr(self, RUNNER_ATTR, None)
        self.runs += 1
        if runner is None:  # no FX graph behind this one: run the GE graph from its own ops
            from airctl.sim.ge_graph_runner import run_loaded

            return run_loaded(self, inputs, assigned_outputs)
        return runner(inputs, assigned_outputs)


def _none(*args: Any, **kwargs: Any) -> None:
    return None


def GetSocName() -> str:  # noqa: N802 - the extension's own name
    return "sim"


def StupidRepeat(word: str, times: int) -> str:  # noqa: N802
    return word * times


def registered_ir_def(table: Any, name: str) -> tuple:
    """CANN's ``GetRegisteredIrDef`` as TorchAir's binding returns it: ``(status, inputs, outputs,
    attrs)``, status ``"SUCCESS"`` or ``"ERROR"``, each list of ``(name, kind)`` pairs."""
    if table is None:
        return ("ERROR", [], [], [])
    return table.lookup(name)


def get_registered_ir_def(name: str):
    return registered_ir_def(None, name)


def CheckAclnnAvaliable(aclnn_name: str) -> bool:  # noqa: N802 - the extension's own name (and spelling)
    """Whether CANN's op-API library has ``aclnn_name``: sim loads no op-API library, so no."""
    return False


RAW_OPS_SUFFIX = "_ge_concrete_graph.auto_generated_ge_raw_ops"


def builtin_op(optype: str) -> bool | None:
    """Whether the CANN matching this TorchAir has op type ``optype``: TorchAir generates one GE op
    constructor per op type of CANN's catalogue (``auto_generated_ge_raw_ops``). None: that module is
    not loaded (no TorchAir in this process), so there is nothing to tell from."""
    raw = next((m for name, m in list(sys.modules.items()) if name.endswith(RAW_OPS_SUFFIX)), None)
    if raw is None:
        return None
    fn = getattr(raw, optype, None)
    return callable(fn) and str(getattr(fn, "__module__", "")).endswith(RAW_OPS_SUFFIX)


def cann_compat(table: Any, optype: str, runtime_optional_inputs, runtime_optional_attrs) -> str:
    """CANN's answer to "does ``optype`` take these optional inputs and attributes", in TorchAir's
    C++ wording (``cann_ir_ability.cpp``), for an op in the session's IR table (declared beside the
    model). A built-in op of the CANN matching this wheel (:func:`builtin_op`) has the IR the caller's
    ``IrDef`` describes: ``""`` (compatible). Any other op is not in CANN's OperatorFactory."""
    ir = None if table is None else table.declared.get(optype)  # not lookup(): that records a miss
    if ir is None:
        if builtin_op(optype) is False:
            return f"OperatorFactory find optype {optype} failed, maybe you need upgrade cann version."
        return ""
    input_names = {name for name, _kind in ir.inputs}
    attr_names = {name for name, _kind in ir.attrs}
    bad_inputs = [name for name in runtime_optional_inputs if name not in input_names]
    bad_attrs = [name for name in runtime_optional_attrs if name not in attr_names]
    if not bad_inputs and not bad_attrs:
        return ""
    return (f"optype {optype} unsupported optional input [{', '.join(bad_inputs)}], "
            f"optional attr [{', '.join(bad_attrs)}], please upgrade cann version.")


def check_cann_compat(optype, runtime_optional_inputs, runtime_optional_attrs) -> str:
    return cann_compat(None, optype, runtime_optional_inputs, runtime_optional_attrs)


def export(serialized, options) -> None:
    """``dynamo_export``'s last step: the ``.air`` GE model (:mod:`airctl.sim.ge_export`)."""
    from airctl.sim.ge_export import export as write_air

    write_air(serialized, options)


def as_torch_tensors(shape, data_type, addresses):
    """llm_datadist's ``create_npu_tensors``: one contiguous device tensor of ``shape`` over the memory at each
    address, nothing copied or freed. Under sim device memory is the process's memory (what an npu tensor's
    ``data_ptr()`` gives), so these are PrivateUse1 tensors over it, as the C++ extension makes on an NPU.
    Returns ``(0, tensors)``, or ``(1, [])`` for a data type it does not know (the extension's status)."""
    import math

    import torch

    from airctl.sim import npu_device

    try:
        name = TorchDataType(int(data_type)).name.lower()  # torch's own dtype names, but bf16
    except ValueError:
        return 1, []
    dtype = getattr(torch, "bfloat16" if name == "bf16" else name)
    dims = [int(d) for d in shape]
    nbytes = math.prod(dims) * dtype.itemsize
    npu_device.register()
    template = torch.empty(dims, dtype=dtype, device="meta")
    tensors = []
    for address in addresses:
        if nbytes and not int(address):
            raise RuntimeError(f"llm_datadist: device address 0 for a tensor of {nbytes} bytes (shape {dims})")
        storage = torch._C._construct_storage_from_data_pointer(int(address), npu_device.device(), nbytes)
        tensors.append(npu_device.with_storage(template, storage, dtype))
    return 0, tensors


def build_module() -> types.ModuleType:
    """A module object with the extension's names, ready for ``sys.modules``."""
    mod = types.ModuleType(MODULE_NAME, __doc__)
    this = sys.modules[__name__]
    for name in (
        "TorchDataType TorchNpuGraphBase GetSocName StupidRepeat get_registered_ir_def check_cann_compat export "
        "as_torch_tensors CheckAclnnAvaliable"
    ).split():
        setattr(mod, name, getattr(this, name))
    # the calls with nothing to do without CANN: no Graph Engine to start or finalize (graphs execute on the
    # CPU), no GE log (TorchAir's Python log is unaffected), no device stdout channel, no dumps
    for name in ("InitializeGraphEngine FinalizeGraphEngine SetDebugLogPath InitDeviceStdoutChannel AclmdlSetDump "
                 "AclopStartDumpArgs AclopStopDumpArgs").split():
        setattr(mod, name, _none)
    mod.__airctl_standin__ = True
    return mod


EXECUTOR_MODULE_NAME = "torchair.core._npu_graph_executor"


def npu_storage_sizes(tensor: Any) -> list[int]:
    """torch_npu's ``get_npu_storage_sizes``: the shape the tensor's storage was created with. Sim
    keeps every tensor in ND format, so that is the shape of the tensor that owns the storage."""
    import torch

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"GetNpuStorageSizes(): incompatible function arguments: {type(tensor).__name__}")
    base = tensor._base if tensor._base is not None else tensor
    return list(base.shape)


def build_executor_module() -> types.ModuleType:
    """``torchair.core._npu_graph_executor``: imported for its side effect of binding torch_npu's
    device runtime into TorchAir; under sim there is nothing to bind."""
    mod = types.ModuleType(EXECUTOR_MODULE_NAME, build_executor_module.__doc__)
    mod.GetNpuStorageSizes = npu_storage_sizes
    mod.__airctl_standin__ = True
    return mod
