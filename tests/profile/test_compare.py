"""airctl/profile/compare.py: step time ratio and overlap gained."""

from __future__ import annotations

import pytest

from airctl.profile.compare import Comparison
from airctl.profile.summary import summarize

from .timelines import MS, seed_two_streams, single_stream


def test_ratio_and_overlap_gained() -> None:
    c = Comparison(summarize([single_stream()]), summarize([seed_two_streams()]), "passes/stream.yaml")
    assert c.step_time_ratio == pytest.approx(4.2 / 5.2)
    assert c.overlap_gained_s == pytest.approx(1 * MS)
    assert c.span_ratio == pytest.approx(4 / 5)
    rows = {r["stream"]: r for r in c.stream_rows()}
    assert rows["stream_1"]["busy_without_s"] is None and rows["stream_1"]["busy_with_s"] == pytest.approx(3 * MS)
    data = c.to_json()
    assert data["step_time_ratio"] == c.step_time_ratio and data["with"]["overlap_s"] == pytest.approx(1 * MS)


def test_no_step_times_gives_no_ratio() -> None:
    a, b = single_stream(), seed_two_streams()
    a.step_seconds, b.step_seconds = [], []
    assert Comparison(summarize([a]), summarize([b])).step_time_ratio is None
