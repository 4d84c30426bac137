"""The ``sim`` backend: TorchAir's own Python pipeline from the wheel, airctl's stand-ins for the
hardware layers, graphs executed on the CPU by airctl's multi-stream executor (docs/sim.md)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from airctl.backends.interface import Backend
from airctl.modes import Mode


class SimBackend(Backend):
    name = "sim"
    process_group = "gloo"
    graphs_run_on_cpu = True
    forkable = True

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.ascend_ir: Any = None  # the model's custom-op IR declarations (airctl.sim.ascend_ir)

    @contextmanager
    def session(self, runs: Any, model_path: Path | None = None) -> Iterator[Any]:
        from airctl.signal_guard import deferred_signals
        from airctl.sim.ascend_ir_files import find_declarations

        with deferred_signals():  # torch's C++ start-up calls back into Python: an interrupt there aborts
            import torch  # noqa: F401

            from airctl.sim.session import session

        # sim's stand-in for CANN's op registry: custom ops' IR declared beside the model (docs/sim.md)
        self.ascend_ir = find_declarations(model_path) if model_path is not None else None
        from airctl.sim.child import child_env

        # child Python processes the script starts get sim too (airctl.sim.child)
        with session(sim_context(runs, self.ascend_ir)) as torchair, child_env():
            yield torchair

    def warm(self, first_use: bool = False) -> None:
        """torch's compiler stack, and TorchAir imported against sim's stand-ins, as each run does;
        ``first_use``: also what a run imports on first use (:mod:`airctl.sim.preload`)."""
        import torch._dynamo  # noqa: F401 - what TorchAir's import and every compile import first

        from airctl.sim.session import load_torchair

        load_torchair()
        if first_use:
            from airctl.sim.preload import first_use as preload

            preload()

    def configure(self, config: Any, mode: Mode) -> str | None:
        """NPU graph capture/replay is a device feature: under sim TorchAir's generated aclgraph code
        (streams, events, closure events) runs eagerly — TorchAir's own run_eagerly path."""
        debug = getattr(config, "debug", None)  # npugraph_ex's own config has none (it keeps its capture bookkeeping)
        if not mode.is_aclgraph or debug is None or str(getattr(debug.run_eagerly, "value", "")) == "1":
            return None
        if not _standin_device():  # the script put its own device stubs (NPUGraph, streams) in place:
            return None  # TorchAir's own capture path runs against them, as on an NPU (TorchAir's tests)
        config.debug.run_eagerly = True
        return (f"sim: {mode} — set debug.run_eagerly=True on the CompilerConfig (NPU graph capture/replay is "
                "not simulated; TorchAir's aclgraph code runs eagerly)")

    def notes(self) -> list[str]:
        """Which custom ops' IR sim took from their converters' keyword calls (not declared)."""
        if self.ascend_ir is None or not self.ascend_ir.assumed:
            return []
        return ["sim: the Ascend IR of " + ", ".join(self.ascend_ir.assumed) + " was taken from the converter's "
                "keyword call to torchair.ge.custom_op (no declaration); on an NPU, CANN must have the op installed"]

    def hint(self, message: str, model_path: str | None) -> str | None:
        """A custom op whose Ascend IR sim does not know: how to declare it (docs/sim.md)."""
        from airctl.sim.ascend_ir import missing_hint

        return missing_hint(message, model_path)

    def profiler_module(self) -> Any:
        import sys

        return sys.modules.get("torch_npu.profiler")

    @contextmanager
    def observing_streams(self, traced: Any) -> Iterator[None]:
        from airctl.sim.registry import REGISTRY

        with REGISTRY.device.observing(traced):
            yield


def _standin_device() -> bool:
    """Whether ``torch_npu`` is airctl's stand-in (not a device stub the script installed itself)."""
    import sys

    module = sys.modules.get("torch_npu")
    return module is None or bool(getattr(module, "__airctl_standin__", False))


def sim_context(runs: Any, ascend_ir: Any = None) -> Any:
    """The sim session's context (:class:`airctl.sim.session.SimContext`): graphs run on ``runs``'s
    executors; ``ascend_ir`` is the model's custom-op IR table
    (:func:`airctl.sim.ascend_ir_files.find_declarations`)."""
    from airctl.sim.session import SimContext

    return SimContext(run_ge=runs.executors.run_ge, run_acl=runs.executors.run_acl,
                      run_npugraph_ex=runs.executors.run_npugraph_ex, ascend_ir=ascend_ir,
                      collective_timeout_s=runs.collective_timeout_s)
