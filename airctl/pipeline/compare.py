"""Compare compiled outputs with eager PyTorch (TorchAir's contract: passes keep results)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-5


@dataclass
class Comparison:
    matches_eager: bool
    max_abs_error: float
    outputs: int
    atol: float
    rtol: float
    mismatches: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def flatten(value: Any, prefix: str = "out") -> list[tuple[str, Any]]:
    import torch

    if isinstance(value, torch.Tensor):
        return [(prefix, value)]
    if isinstance(value, (list, tuple)):
        items: list[tuple[str, Any]] = []
        for i, v in enumerate(value):
            items.extend(flatten(v, f"{prefix}[{i}]"))
        return items
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            items.extend(flatten(v, f"{prefix}[{k!r}]"))
        return items
    if hasattr(value, "to_tuple"):
        return flatten(value.to_tuple(), prefix)
    return [(prefix, value)]


def compare(eager: Any, compiled: Any, atol: float = DEFAULT_ATOL, rtol: float = DEFAULT_RTOL) -> Comparison:
    import torch

    a, b = flatten(eager), flatten(compiled)
    mismatches: list[str] = []
    worst = 0.0
    if len(a) != len(b):
        mismatches.append(f"eager produced {len(a)} outputs, compiled {len(b)}")
    for (name, x), (_, y) in zip(a, b, strict=False):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape:
                mismatches.append(f"{name}: shape {tuple(x.shape)} vs {tuple(y.shape)}")
                continue
            if x.numel() == 0:
                continue
            diff = (x.detach().double() - y.detach().double()).abs()
            err = float(diff.max()) if diff.numel() else 0.0
            if err != err:  # NaN
                err = float("inf")
            worst = max(worst, err)
            if not torch.allclose(x.detach().double(), y.detach().double(), atol=atol, rtol=rtol, equal_nan=True):
                mismatches.append(f"{name}: max abs error {err:.3g}")
        elif x != y:
            mismatches.append(f"{name}: {x!r} vs {y!r}")
    return Comparison(not mismatches, worst, len(a), atol, rtol, mismatches)
