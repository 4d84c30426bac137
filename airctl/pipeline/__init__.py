"""The orchestration layer: compile, run, apply, explain, profile, resolve a SOURCE (docs/architecture.md).

Importing it makes ``import torch`` work here first: with the torch-npu wheel installed and no
CANN, torch's device-backend autoload would fail, so ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` is set
(unless the user set it) before any module below imports torch (:mod:`airctl.torch_env`).
"""

from airctl.torch_env import ensure_torch_importable

ensure_torch_importable()
