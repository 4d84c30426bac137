"""``airctl profile --compare``: the same model without and with a pass file, side by side.

``step_time_ratio`` = median step time with the passes / without (below 1: faster with);
``overlap_gained_s`` = overlap with − overlap without; the same for the op span and the critical
path, and busy time per stream (a stream present on one side only counts 0 on the other).

Each side may have been run several times (``rounds_*``, alternating): ``without`` and
``with_passes`` are then the rounds with the median step time, and :attr:`Comparison.verdict`
(:mod:`airctl.profile.noise`) says whether the difference exceeds the noise between rounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.profile.noise import NoiseVerdict, judge
from airctl.profile.summary import ProfileSummary


def ratio(a: float | None, b: float | None) -> float | None:
    """``a / b``; None where either is unknown or ``b`` is 0 (a step time "with" over one "without")."""
    return a / b if a is not None and b else None


@dataclass
class Comparison:
    without: ProfileSummary
    with_passes: ProfileSummary
    passes_file: str | None = None
    rounds_without: list[ProfileSummary] = field(default_factory=list)  # every round, in run order
    rounds_with: list[ProfileSummary] = field(default_factory=list)

    @property
    def verdict(self) -> NoiseVerdict:
        """Median and spread over the rounds, and a difference only when it exceeds the noise."""
        a = self.rounds_without or [self.without]
        b = self.rounds_with or [self.with_passes]

        def steps(side: list[ProfileSummary]) -> list[float]:
            return [s.step_s for s in side if s.step_s is not None]

        def busy(side: list[ProfileSummary]) -> list[float]:
            return [sum(st.busy_s for st in s.streams) for s in side]

        return judge(steps(a), steps(b), overlap=([s.overlap_s for s in a], [s.overlap_s for s in b]),
                     busy=(busy(a), busy(b)))

    @property
    def step_time_ratio(self) -> float | None:
        return ratio(self.with_passes.step_s, self.without.step_s)

    @property
    def span_ratio(self) -> float | None:
        return ratio(self.with_passes.span_s, self.without.span_s)

    @property
    def critical_path_ratio(self) -> float | None:
        return ratio(self.with_passes.critical_path_s, self.without.critical_path_s)

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
            "verdict": self.verdict.to_json(),
            "rounds": {"without": [s.step_s for s in self.rounds_without or [self.without]],
                       "with": [s.step_s for s in self.rounds_with or [self.with_passes]]},
            "without": self.without.to_json(),
            "with": self.with_passes.to_json(),
        }
