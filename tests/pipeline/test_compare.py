"""The eager comparison behind `execution.matches_eager`."""

from __future__ import annotations

import torch

from airctl.pipeline.compare import compare


def test_equal_nested_outputs_match() -> None:
    a = (torch.ones(2), [torch.zeros(3), {"k": torch.full((1,), 2.0)}])
    result = compare(a, (torch.ones(2), [torch.zeros(3), {"k": torch.full((1,), 2.0)}]))
    assert result.matches_eager and result.max_abs_error == 0.0 and result.outputs == 3


def test_difference_beyond_tolerance_is_reported_with_its_path() -> None:
    result = compare((torch.ones(2), torch.ones(2)), (torch.ones(2), torch.ones(2) + 1e-3))
    assert not result.matches_eager
    assert abs(result.max_abs_error - 1e-3) < 1e-6  # float32 rounding of 1 + 1e-3
    assert result.mismatches[0].startswith("out[1]")


def test_shape_and_count_mismatch() -> None:
    assert not compare(torch.ones(2), torch.ones(3)).matches_eager
    assert not compare((torch.ones(1),), (torch.ones(1), torch.ones(1))).matches_eager
