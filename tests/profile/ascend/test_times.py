"""airctl/profile/ascend/times.py: exact µs text → integer ns, and what is not a time."""

from __future__ import annotations

import pytest

from airctl.profile.ascend.times import TimeValueError, implausible_starts, us_to_ns


@pytest.mark.parametrize("text, ns", [
    ("1736413971558972.912\t", 1736413971558972912),  # the CSV's start cell, TAB and all
    ('"1736413971558972.912\t"', 1736413971558972912),
    ("1699529622793969.5", 1699529622793969500),  # the 2023 sample's re-saved form
    ("185.504", 185504), ("1.087000", 1087), ("0", 0), (53.741, 53741), (12.77012757357446, 12770), (3, 3000),
])
def test_exact(text: object, ns: int) -> None:
    assert us_to_ns(text) == ns


def test_float64_could_not() -> None:
    """What the old reader did: 1736413971558972.912 as a float is .875, 37 ns off."""
    assert float("1736413971558972.912") * 1000 != us_to_ns("1736413971558972.912")


@pytest.mark.parametrize("text, kind", [("N/A", "missing"), ("", "missing"), (None, "missing"), ("nan", "nan"),
                                        ("inf", "nan"), ("soon", "text"), (True, "text")])
def test_not_a_time(text: object, kind: str) -> None:
    with pytest.raises(TimeValueError) as info:
        us_to_ns(text)
    assert info.value.kind == kind


def test_implausible_starts() -> None:
    day = 86_400 * 10**9
    starts = [10**18, 10**18 + 5, 10**18 + day + 1, -3, 10**33, 10**18 - 7]
    assert implausible_starts(starts) == {2, 3, 4}
