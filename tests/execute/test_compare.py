"""airctl/execute/compare.py: the one output comparator (torch.testing.assert_close semantics)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from airctl.execute.compare import compare, flatten  # noqa: E402

NAN, INF = float("nan"), float("inf")


def test_equal_nested_outputs_match_and_name_their_leaves() -> None:
    a = (torch.ones(2), [torch.zeros(3), {"k": torch.full((1,), 2.0)}])
    result = compare(a, (torch.ones(2), [torch.zeros(3), {"k": torch.full((1,), 2.0)}]))
    assert result.matches and result.matches_eager and result.max_abs_error == 0.0 and result.outputs == 3
    assert [p for p, _ in flatten(a)] == ["out[0]", "out[1][0]", "out[1][1]['k']"]


def test_a_nested_difference_is_reported_with_its_path() -> None:
    a = (torch.ones(2), [torch.zeros(3), {"k": torch.full((1,), 2.0)}])
    b = (torch.ones(2), [torch.zeros(3), {"k": torch.full((1,), 2.5)}])
    result = compare(a, b)
    assert result.mismatches == ["out[1][1]['k']: max abs error 0.5"] and result.max_abs_error == 0.5


def test_to_json_keeps_the_execution_keys() -> None:
    data = compare(torch.ones(1), torch.ones(1), atol=1e-3, rtol=1e-4).to_json()
    assert data == {"matches_eager": True, "max_abs_error": 0.0, "outputs": 1, "atol": 1e-3, "rtol": 1e-4,
                    "mismatches": []}


def test_nan_matches_nan_only() -> None:
    both = compare(torch.tensor([1.0, NAN]), torch.tensor([1.0, NAN]))
    assert both.matches and both.max_abs_error == 0.0
    one = compare(torch.tensor([1.0, NAN]), torch.tensor([1.0, 2.0]))
    assert not one.matches and one.max_abs_error == math.inf  # finite-or-inf, never NaN
    other = compare(torch.tensor([1.0, 2.0]), torch.tensor([NAN, 2.0]))
    assert not other.matches and other.mismatches == ["out: max abs error inf"]


def test_infinities_match_only_the_same_infinity() -> None:
    assert compare(torch.tensor([INF, -INF]), torch.tensor([INF, -INF])).max_abs_error == 0.0
    assert compare(torch.tensor([INF, -INF]), torch.tensor([INF, -INF])).matches
    flipped = compare(torch.tensor([INF]), torch.tensor([-INF]))
    assert not flipped.matches and flipped.max_abs_error == math.inf
    assert not compare(torch.tensor([INF]), torch.tensor([1e30])).matches


def test_dtype_mismatch_is_a_mismatch_even_with_equal_values() -> None:
    result = compare(torch.ones(2), torch.ones(2, dtype=torch.float64))
    assert not result.matches and result.mismatches == ["out: dtype torch.float32 vs torch.float64"]


def test_shape_and_count_mismatches() -> None:
    assert compare(torch.ones(2), torch.ones(3)).mismatches == ["out: shape (2,) vs (3,)"]
    assert not compare(torch.ones(2), torch.ones(1, 2)).matches  # same numel, other shape
    counted = compare((torch.ones(1),), (torch.ones(1), torch.ones(1)))
    assert counted.mismatches == ["eager produced 1 outputs, compiled 2"]
    before_after = compare([torch.ones(1)], [], labels=("before", "after"))
    assert before_after.mismatches == ["before produced 1 outputs, after 0"] and before_after.outputs == 1


def test_containers_may_differ_when_the_leaves_agree() -> None:
    assert compare(torch.ones(1), (torch.ones(1),)).matches  # a graph's x, a compiled callable's (x,)
    assert compare([torch.ones(1), 2], (torch.ones(1), 2)).matches
    assert compare({"a": torch.ones(1)}, [torch.zeros(1)]).mismatches == ["out['a']: max abs error 1"]


def test_integer_and_bool_tensors_must_be_equal() -> None:
    assert compare(torch.arange(5), torch.arange(5)).matches
    big = torch.tensor([1_000_000])
    near = compare(big, big + 1, atol=1e-5, rtol=1e-5)  # rtol * |x| = 10 would let a float through
    assert not near.matches and near.mismatches == ["out: 1 of 1 elements differ (max abs error 1)"]
    flags = compare(torch.tensor([True, False]), torch.tensor([True, True]))
    assert not flags.matches and flags.max_abs_error == 1.0
    assert compare(torch.tensor([True]), torch.tensor([True])).matches


def test_complex_tensors_use_the_modulus() -> None:
    x = torch.tensor([1 + 1j, 2 - 1j], dtype=torch.complex64)
    assert compare(x, x.clone()).matches
    y = x + torch.tensor([0, 3j], dtype=torch.complex64)
    result = compare(x, y)
    assert not result.matches and result.max_abs_error == pytest.approx(3.0)


def test_empty_tensors_match() -> None:
    assert compare(torch.ones(0, 3), torch.ones(0, 3)).matches


def test_non_tensor_leaves_compare_by_equality() -> None:
    assert compare((torch.ones(1), 3, "s", None), (torch.ones(1), 3, "s", None)).matches
    assert compare((1, "s"), (1, "t")).mismatches == ["out[1]: 's' vs 't'"]
    assert compare(1.0, 1.0 + 1e-9).matches  # Python floats follow the tensor tolerance
    assert compare(NAN, NAN).matches and not compare(NAN, 1.0).matches
    assert compare(torch.ones(1), 1.0).mismatches == ["out: tensor (1,) torch.float32 vs float"]


def test_requires_grad_outputs_are_compared_detached() -> None:
    x = torch.ones(2, requires_grad=True)
    assert compare(x * 2, (x * 2).detach()).matches


class _ModelOutput:
    def __init__(self, *values: object) -> None:
        self.values = values

    def to_tuple(self) -> tuple[object, ...]:
        return self.values


def test_to_tuple_outputs_are_flattened() -> None:
    result = compare(_ModelOutput(torch.ones(1), torch.zeros(1)), (torch.ones(1), torch.ones(1)))
    assert result.mismatches == ["out[1]: max abs error 1"]


# -- tolerance edges, as properties ---------------------------------------------------------------
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, width=64)
tol = st.sampled_from([0.0, 1e-8, 1e-5, 1e-3, 0.1])


@settings(max_examples=200, deadline=None)
@given(x=finite, atol=tol, rtol=tol, scale=st.floats(min_value=0.0, max_value=2.0))
def test_matches_exactly_when_assert_close_passes(x: float, atol: float, rtol: float, scale: float) -> None:
    bound = atol + rtol * abs(x)
    y = x + scale * bound + (1e-3 if scale > 1.0 else 0.0)  # inside the bound up to scale 1, outside beyond
    a, b = torch.tensor([x], dtype=torch.float64), torch.tensor([y], dtype=torch.float64)
    try:
        torch.testing.assert_close(b, a, atol=atol, rtol=rtol, equal_nan=True)
        reference = True
    except AssertionError:
        reference = False
    result = compare(a, b, atol=atol, rtol=rtol)
    assert result.matches is reference
    assert result.max_abs_error == pytest.approx(abs(y - x), rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=8),
       noise=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=8, max_size=8))
def test_agrees_with_assert_close_on_nan_and_inf(values: list[float], noise: list[float]) -> None:
    a = torch.tensor(values, dtype=torch.float32)
    b = torch.tensor([v if i % 2 else noise[i] for i, v in enumerate(values)], dtype=torch.float32)
    try:
        torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-5, equal_nan=True)
        reference = True
    except AssertionError:
        reference = False
    result = compare(a, b)
    assert result.matches is reference
    assert not math.isnan(result.max_abs_error)
    assert compare(a, a.clone()).matches and compare(a, a.clone()).max_abs_error == 0.0


@settings(max_examples=50, deadline=None)
@given(ints=st.lists(st.integers(min_value=-2**31, max_value=2**31 - 1), min_size=1, max_size=6),
       flip=st.integers(min_value=0, max_value=5))
def test_integer_tensors_match_iff_equal(ints: list[int], flip: int) -> None:
    a = torch.tensor(ints, dtype=torch.int64)
    b = a.clone()
    if flip < len(ints):
        b[flip] += 1
    assert compare(a, b).matches is bool(torch.equal(a, b))


def test_objects_compared_by_identity_are_compared_by_their_attributes() -> None:
    import torch

    from airctl.execute.compare import compare

    class Layer:  # like a Hugging Face cache layer: == is identity
        def __init__(self, k):
            self.keys, self.values, self._private = k, k * 2, object()

    class Cache:
        def __init__(self, k):
            self.layers = [Layer(k)]
            self.offloading = False

    a, b = Cache(torch.ones(2)), Cache(torch.ones(2))
    assert compare({"cache": a}, {"cache": b}).matches
    b.layers[0].values = torch.zeros(2)
    c = compare({"cache": a}, {"cache": b})
    assert not c.matches and c.mismatches[0].startswith("out['cache'].layers[0].values")
