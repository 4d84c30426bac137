"""The searches of airctl bisect: how many tests they need, and what they return."""

from __future__ import annotations

import math

import pytest

from airctl.pipeline.bisect.search import ddmin, first_bad_prefix


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 100])
def test_first_bad_prefix_takes_ceil_log2_n_tests(n: int) -> None:
    for culprit in range(n):
        calls: list[int] = []

        def test(prefix: list[int], culprit: int = culprit, calls: list[int] = calls) -> bool:
            calls.append(len(prefix))
            return culprit in prefix

        assert first_bad_prefix(list(range(n)), test) == culprit + 1
        assert len(calls) <= math.ceil(math.log2(n)) if n > 1 else not calls


def test_ddmin_finds_one_culprit_in_about_2_log2_n_tests() -> None:
    calls: list[list[int]] = []

    def test(keep: list[int]) -> bool:
        calls.append(keep)
        return 37 in keep

    assert ddmin(list(range(64)), test) == [37]
    assert len(calls) <= 2 * math.log2(64)


def test_ddmin_keeps_what_only_fails_together_and_is_1_minimal() -> None:
    def test(keep: list[int]) -> bool:
        return {2, 9, 13} <= set(keep)

    found = ddmin(list(range(16)), test)
    assert found == [2, 9, 13]
    assert all(not test([x for x in found if x != drop]) for drop in found)
