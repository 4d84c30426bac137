"""airctl/profile/noise.py: a difference is stated only when it exceeds the noise between rounds (issue 32)."""

from __future__ import annotations

import random
import statistics

from airctl.profile.noise import DEFAULT_ROUNDS, judge


def rounds(rng: random.Random, n: int, scale: float, sigma: float, steps: int = 5) -> list[float]:
    """Per-round medians of ``steps`` step times with multiplicative noise (a busy 2-core machine)."""
    out = []
    for _ in range(n):
        drift = rng.lognormvariate(0, sigma / 2)  # the machine's state changes between rounds
        out.append(statistics.median(scale * drift * rng.lognormvariate(0, sigma) for _ in range(steps)))
    return out


def test_the_same_configuration_is_no_measurable_difference_at_least_19_times_in_20() -> None:
    """Acceptance 5, on simulated noise (2,000 comparisons of identical configurations, three noise levels)."""
    rng = random.Random(32)
    for sigma in (0.05, 0.2, 0.5):
        said = [judge(rounds(rng, DEFAULT_ROUNDS, 1e-3, sigma), rounds(rng, DEFAULT_ROUNDS, 1e-3, sigma)).measurable
                for _ in range(2000)]
        assert sum(said) / len(said) <= 0.05, (sigma, sum(said))


def test_a_real_speedup_is_found_and_named() -> None:
    rng = random.Random(7)
    found = [judge(rounds(rng, DEFAULT_ROUNDS, 1e-3, 0.05), rounds(rng, DEFAULT_ROUNDS, 0.5e-3, 0.05),
                   overlap=([0.0] * 4, [0.5e-3] * 4), busy=([1e-3] * 4, [1e-3] * 4)) for _ in range(200)]
    assert sum(v.measurable for v in found) >= 190
    assert all("faster" in v.text and "overlap gained" in v.text for v in found if v.measurable)


def test_op_time_is_named_when_it_explains_the_difference() -> None:
    v = judge([1.0, 1.01, 0.99], [1.5, 1.51, 1.49], overlap=([0.1] * 3, [0.1] * 3), busy=([0.9] * 3, [1.4] * 3))
    assert v.measurable and v.text.startswith("1.50× slower") and "op time +500.00 ms" in v.text


def test_too_few_rounds_claim_nothing() -> None:
    v = judge([1.0], [2.0])
    assert not v.measurable and "--repeats 3" in v.text


def test_a_spread_that_swamps_the_difference_claims_no_speedup() -> None:
    """Issue 62: "3.78× faster" printed beside "spread ±97.1 %"; the rerun said no measurable difference."""
    v = judge([1.0, 1.1, 0.9, 1.05], [0.1, 0.264, 0.25, 0.6])  # the faster side's rounds spread ±94%
    assert not v.measurable and "faster" not in v.text and "spread ±" in v.text
    v = judge([1.0, 1.02, 0.99, 1.01], [0.8, 0.81, 0.79, 1.0])  # ranges overlap: some rounds as slow as without
    assert not v.measurable


def test_a_stated_ratio_says_the_least_every_round_shows() -> None:
    v = judge([1.0, 1.02, 0.99, 1.01], [0.5, 0.51, 0.49, 0.52])
    assert v.measurable and v.text.startswith("1.99× faster (at least 1.90× in every round")
