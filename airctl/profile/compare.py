"""``airctl profile --compare``: the same model without and with a pass file, side by side.

``step_time_ratio`` = median step time with the passes / without (below 1: faster with);
``overlap_gained_s`` = overlap with − overlap without; the same for the op span and the critical
path, and busy time per stream (a stream present on one side only counts 0 on the other).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airctl.profile.summary import ProfileSummary


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


@dataclass
class Comparison:
    without: ProfileSummary
    with_passes: ProfileSummary
    passes_file: str | None = None

    @property
    def step_time_ratio(self) -> float | None:
        return _ratio(self.with_passes.step_s, self.without.step_s)

    @property
    def span_ratio(self) -> float | None:
        return _ratio(self.with_passes.span_s, self.without.span_s)

    @property
    def critical_path_ratio(self) -> float | None:
        return _ratio(self.with_passes.critical_path_s, self.without.critical_path_s)

    @property
    def overlap_gained_s(self) -> float:
        return self.with_passes.overlap_s - self.without.overlap_s

    def stream_rows(self) -> list[dict[str, Any]]:
        """Per stream: busy seconds without and with (None where the stream does not exist)."""
        a = {s.stream: s.busy_s for s in self.without.streams}
        b = {s.stream: s.busy_s for s in self.with_passes.streams}
        names = list(dict.fromkeys([*a, *b]))
        return [{"stream": n, "busy_without_s": a.get(n), "busy_with_s": b.get(n)} for n in names]

    def to_json(self) -> dict[str, Any]:
        return {
            "passes_file": self.passes_file,
            "step_time_ratio": self.step_time_ratio,
            "overlap_gained_s": self.overlap_gained_s,
            "span_ratio": self.span_ratio,
            "critical_path_ratio": self.critical_path_ratio,
            "streams": self.stream_rows(),
            "without": self.without.to_json(),
            "with": self.with_passes.to_json(),
        }
