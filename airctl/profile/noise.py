"""Is a step-time difference between two profiled configurations real, or the machine's noise?

On a shared CPU, one run per side measures the machine as much as the pass file: the same
comparison can read ``1.82× faster`` (with no overlap gained) and then ``1.17× slower``.
``profile --compare`` therefore runs each side several times (rounds on one compile per side),
and this module judges the per-round median step times:

- a side's **median** is the median of its rounds' medians, its **spread** the range of them;
- a difference is stated only when it exceeds the noise: every round of the faster side faster than
  every round of the slower one (the ranges do not overlap), by more than :data:`MIN_RELATIVE`, with
  at least :data:`MIN_ROUNDS` rounds a side (with fewer there is no spread to compare against), and
  neither side's rounds spread over more than ±:data:`MAX_SPREAD` of its median (a machine that
  busy measures itself: "3.78× faster" beside "spread ±97%" was "no difference" on a rerun).
  Otherwise: "no measurable difference". A stated ratio is the medians', with the least one every
  pair of rounds shows beside it. With four rounds, identical configurations are called different
  about 1% of the time (``tests/profile/test_noise.py`` measures the rule on simulated noise);
- a stated difference names its mechanism, from the medians of the same rounds: the overlap
  gained between streams, or the op time (busy time summed over streams), whichever accounts
  for at least half of it; else the rest (synchronisation waits, idle gaps).

>>> v = judge([1.0, 1.02, 0.99, 1.01], [0.70, 0.71, 0.69, 0.72], overlap=([0.0] * 4, [0.3] * 4),
...           busy=([1.0] * 4, [1.0] * 4))
>>> v.measurable, v.text.split(";")[0]
(True, '1.43× faster (at least 1.38× in every round')
>>> v.text.split("; ")[1]
'median of 4 rounds a side, spread ±2.1%): overlap gained +300.00 ms'
>>> judge([1.0, 1.02, 0.99, 1.01], [1.01, 0.98, 1.0, 1.03]).text
'no measurable difference (median of 4 rounds a side: 1.005 s vs 1.005 s, spread ±2.5%)'
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

MIN_ROUNDS = 3
MIN_RELATIVE = 0.03
MAX_SPREAD = 0.25  # ± this fraction of a side's median: beyond it the rounds measure the machine
DEFAULT_ROUNDS = 4


@dataclass
class NoiseVerdict:
    measurable: bool
    text: str
    median_without: float | None
    median_with: float | None
    spread_without: float | None
    spread_with: float | None
    mechanism: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _spread(values: list[float]) -> float:
    return max(values) - min(values) if values else 0.0


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _s(seconds: float) -> str:
    return f"{seconds:.3f} s" if seconds >= 1 else _ms(seconds)


def _mechanism(delta: float, overlap: tuple[list[float], list[float]] | None,
               busy: tuple[list[float], list[float]] | None) -> str:
    """What accounts for at least half of ``delta`` (with − without, seconds)."""
    gained = statistics.median(overlap[1]) - statistics.median(overlap[0]) if overlap and all(overlap) else 0.0
    op_time = statistics.median(busy[1]) - statistics.median(busy[0]) if busy and all(busy) else 0.0
    half = abs(delta) / 2
    if delta < 0 and gained >= half:
        return f"overlap gained +{_ms(gained)}"
    if delta > 0 and -gained >= half:
        return f"overlap lost -{_ms(-gained)}"
    if op_time and (op_time > 0) == (delta > 0) and abs(op_time) >= half:
        return f"op time {'+' if op_time > 0 else '-'}{_ms(abs(op_time))}"
    return "neither overlap nor op time: synchronisation waits or idle gaps"


def judge(without: list[float], with_passes: list[float], *,
          overlap: tuple[list[float], list[float]] | None = None,
          busy: tuple[list[float], list[float]] | None = None) -> NoiseVerdict:
    """Judge per-round median step times (seconds) of the two sides (see the module docstring)."""
    if not without or not with_passes:
        return NoiseVerdict(False, "no step time measured", None, None, None, None)
    ma, mb = statistics.median(without), statistics.median(with_passes)
    sa, sb = _spread(without), _spread(with_passes)
    rounds = min(len(without), len(with_passes))
    relative = max(sa / ma if ma else 0.0, sb / mb if mb else 0.0) / 2
    spread = f"spread ±{100 * relative:.1f}%"
    if rounds < MIN_ROUNDS:
        return NoiseVerdict(False, f"no measurable difference claimed: {rounds} round(s) a side give no spread "
                                   f"(--repeats {MIN_ROUNDS} or more); medians {_s(ma)} vs {_s(mb)}",
                            ma, mb, sa, sb)
    if relative > MAX_SPREAD:
        return NoiseVerdict(False, f"no measurable difference claimed: the rounds {spread} (over "
                                   f"±{100 * MAX_SPREAD:.0f}%), so they measure the machine (medians {_s(ma)} vs "
                                   f"{_s(mb)}); rerun on a quieter machine or with more --repeats", ma, mb, sa, sb)
    delta = mb - ma
    slower, faster = (without, with_passes) if delta < 0 else (with_passes, without)
    least = min(slower) / max(faster) if max(faster) > 0 else 0.0  # the smallest ratio any two rounds show
    if least <= 1 + MIN_RELATIVE or abs(delta) <= MIN_RELATIVE * max(ma, mb):
        return NoiseVerdict(False, f"no measurable difference (median of {rounds} rounds a side: {_s(ma)} vs "
                                   f"{_s(mb)}, {spread})", ma, mb, sa, sb)
    ratio = mb / ma
    speed = f"{1 / ratio:.2f}× faster" if ratio < 1 else f"{ratio:.2f}× slower"
    mechanism = _mechanism(delta, overlap, busy)
    return NoiseVerdict(True, f"{speed} (at least {least:.2f}× in every round; median of {rounds} rounds a side, "
                              f"{spread}): {mechanism}", ma, mb, sa, sb, mechanism)
