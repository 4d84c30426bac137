"""The ``npu`` backend: the real torch_npu, CANN and TorchAir on an Ascend machine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from airctl.backends.interface import Backend
from airctl.errors import BackendError
from airctl.torch_env import ensure_torch_importable


class NpuBackend(Backend):
    name = "npu"
    process_group = "hccl"

    @contextmanager
    def session(self, runs: Any, model_path: Path | None = None) -> Iterator[Any]:
        ensure_torch_importable()
        from airctl.hooks import signal_handlers
        from airctl.signal_guard import deferred_signals

        try:  # deferred: torch's and torch_npu's C++ start-up call back into Python (airctl/signal_guard.py)
            with signal_handlers.kept(), deferred_signals():  # TorchAir's own would swallow Ctrl-C (see the module)
                import torch_npu  # noqa: F401
                import torchair
        except Exception as e:  # ImportError from missing CANN libs, RuntimeError from autoload
            raise BackendError(f"backend npu: cannot import torch_npu/torchair: {e}",
                               hint="source CANN's set_env.sh, or use --backend sim") from e
        yield torchair

    def profiler_module(self) -> Any:
        try:
            import torch_npu.profiler as profiler  # the real one, on an NPU machine
        except Exception:  # noqa: BLE001 - no profiler, nothing to record
            return None
        return profiler
