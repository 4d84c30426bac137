"""Do two runs give the same outputs? The one comparator behind ``execution`` and ``eager_check``.

TorchAir's contract is that compiling, and every custom pass, keeps a model's results. airctl
checks it twice: the compiled model against eager PyTorch (``index.json`` ``execution``) and
each pass's graph against the graph it received (``eager_check``). Both use :func:`compare`,
which follows ``torch.testing.assert_close``:

- outputs are flattened into leaves named by their path on the expected side (``out[0]``,
  ``out[1]['k']``; ``to_tuple()`` objects such as Hugging Face outputs as tuples; objects whose
  ``==`` is identity, such as Hugging Face caches, by their public attributes: ``out['cache'].layers``)
  and compared
  leaf by leaf, in order: only the number of leaves must agree, not the containers (a graph
  returning ``x`` and a compiled callable returning ``(x,)`` give the same outputs);
- floating and complex tensors match where ``|actual - expected| <= atol + rtol * |expected|``
  per element; NaN matches NaN only (``equal_nan``), an infinity only the same infinity;
- integer and bool tensors must be equal; a shape or dtype difference is a mismatch (values are
  not compared then); tensors are compared on the CPU, whatever their device;
- Python floats and complex numbers follow the tensor rule, every other leaf is compared with
  ``==``; a tensor against a non-tensor is a mismatch.

``max_abs_error`` is the largest ``|actual - expected|`` over compared elements, never NaN: a NaN
or infinity facing anything else counts as ``inf`` (and is a mismatch), two NaNs or two equal
infinities as 0.

>>> import torch
>>> c = compare((torch.ones(2), {"k": torch.tensor([float("nan")])}),
...             (torch.ones(2) + 1e-3, {"k": torch.tensor([float("nan")])}))
>>> c.matches, c.outputs, c.mismatches
(False, 2, ['out[0]: max abs error 0.001'])
"""

from __future__ import annotations

import cmath
import math
from dataclasses import dataclass, field
from typing import Any

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-5


@dataclass
class Comparison:
    """The outcome of :func:`compare`: ``mismatches`` name each differing output by its path."""

    matches: bool
    max_abs_error: float
    outputs: int  # leaves of the expected outputs
    atol: float
    rtol: float
    mismatches: list[str] = field(default_factory=list)

    @property
    def matches_eager(self) -> bool:
        """``matches`` where the expected side is eager PyTorch (the ``execution`` record)."""
        return self.matches

    def to_json(self) -> dict[str, Any]:
        """The ``execution`` record of ``index.json`` (docs/ledger.md): the reference is eager PyTorch."""
        return {"matches_eager": self.matches, "max_abs_error": self.max_abs_error, "outputs": self.outputs,
                "atol": self.atol, "rtol": self.rtol, "mismatches": list(self.mismatches)}


def flatten(value: Any, prefix: str = "out", _seen: frozenset[int] = frozenset()) -> list[tuple[str, Any]]:
    """``(path, leaf)`` pairs of nested tuples, lists, dicts, ``to_tuple()`` objects and objects
    compared by identity (their public attributes; an object met again inside itself is a leaf)."""
    import torch

    if isinstance(value, torch.Tensor):
        return [(prefix, value)]
    if isinstance(value, (list, tuple)):
        items: list[tuple[str, Any]] = []
        for i, v in enumerate(value):
            items.extend(flatten(v, f"{prefix}[{i}]", _seen))
        return items
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            items.extend(flatten(v, f"{prefix}[{k!r}]", _seen))
        return items
    if hasattr(value, "to_tuple"):
        return flatten(value.to_tuple(), prefix, _seen)
    state = _state(value) if id(value) not in _seen else {}
    if state:
        items = []
        for k, v in state.items():
            items.extend(flatten(v, f"{prefix}.{k}", _seen | {id(value)}))
        return items
    return [(prefix, value)]


def _state(value: Any) -> dict[str, Any]:
    """The public attributes of a data object whose ``==`` is ``is`` (two runs never give equal ones);
    empty for anything else (callables and classes included)."""
    if type(value).__eq__ is not object.__eq__ or callable(value) or not hasattr(value, "__dict__"):
        return {}
    return {k: v for k, v in vars(value).items() if not k.startswith("_")}


def compare(expected: Any, actual: Any, atol: float = DEFAULT_ATOL, rtol: float = DEFAULT_RTOL,
            labels: tuple[str, str] = ("eager", "compiled")) -> Comparison:
    """Compare ``actual`` with ``expected`` (``labels`` name the two sides in messages)."""
    a, b = flatten(expected), flatten(actual)
    mismatches: list[str] = []
    if len(a) != len(b):
        mismatches.append(f"{labels[0]} produced {len(a)} outputs, {labels[1]} {len(b)}")
    worst = 0.0
    for (name, x), (_, y) in zip(a, b, strict=False):
        err, problem = _leaf(x, y, atol, rtol)
        worst = max(worst, err)
        if problem is not None:
            mismatches.append(f"{name}: {problem}")
    return Comparison(not mismatches, worst, len(a), atol, rtol, mismatches)


def _leaf(x: Any, y: Any, atol: float, rtol: float) -> tuple[float, str | None]:
    """(max abs error, what differs or None) for one pair of leaves (expected ``x``, actual ``y``)."""
    import torch

    if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
        if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
            return 0.0, f"{_kind(x)} vs {_kind(y)}"
        return _tensors(x, y, atol, rtol)
    if isinstance(x, (float, complex)) and isinstance(y, (float, complex)):
        err = _scalar_error(complex(x), complex(y))
        ok = _scalar_close(complex(x), complex(y), atol, rtol)
        return err, None if ok else f"{x!r} vs {y!r}"
    try:
        equal = bool(x == y)
    except Exception as e:  # noqa: BLE001 - an == that cannot answer (arrays, odd objects) is a difference
        return 0.0, f"{x!r} vs {y!r} ({type(e).__name__} comparing them)"
    return 0.0, None if equal else f"{x!r} vs {y!r}"


def _tensors(x: Any, y: Any, atol: float, rtol: float) -> tuple[float, str | None]:
    import torch

    if x.shape != y.shape:
        return 0.0, f"shape {tuple(x.shape)} vs {tuple(y.shape)}"
    if x.dtype != y.dtype:
        return 0.0, f"dtype {x.dtype} vs {y.dtype}"
    if x.numel() == 0:
        return 0.0, None
    x, y = x.detach().cpu(), y.detach().cpu()
    if not (x.is_floating_point() or x.is_complex()):
        differ = x != y
        if not bool(differ.any()):
            return 0.0, None
        err = float((x.to(torch.float64) - y.to(torch.float64)).abs().max()) if x.dtype != torch.bool else 1.0
        return err, f"{int(differ.sum())} of {x.numel()} elements differ (max abs error {err:.3g})"
    wide = torch.complex128 if x.is_complex() else torch.float64
    xw, yw = x.to(wide), y.to(wide)
    close = torch.isclose(yw, xw, rtol=rtol, atol=atol, equal_nan=True)
    diff = (xw - yw).abs()
    same = (xw == yw) | (torch.isnan(xw) & torch.isnan(yw))  # equal infinities and NaN pairs: no error
    diff = torch.where(same, torch.zeros_like(diff), diff.nan_to_num(nan=math.inf, posinf=math.inf))
    err = float(diff.max())
    if bool(close.all()):
        return err, None
    return err, f"max abs error {err:.3g}"


def _scalar_error(x: complex, y: complex) -> float:
    if x == y or (cmath.isnan(x) and cmath.isnan(y)):
        return 0.0
    d = abs(x - y)
    return math.inf if math.isnan(d) else d


def _scalar_close(x: complex, y: complex, atol: float, rtol: float) -> bool:
    if cmath.isnan(x) or cmath.isnan(y):
        return cmath.isnan(x) and cmath.isnan(y)
    if x == y:
        return True
    if cmath.isinf(x) or cmath.isinf(y):
        return False
    return abs(x - y) <= atol + rtol * abs(x)


def _kind(v: Any) -> str:
    import torch

    if isinstance(v, torch.Tensor):
        return f"tensor {tuple(v.shape)} {v.dtype}"
    return type(v).__name__
