"""Times as torch_npu writes them, read exactly, and checked for plausibility.

Timestamps are absolute epoch microseconds with three decimals (``"1736413971558972.912"``,
in ``kernel_details.csv`` often followed by a TAB); float64 resolves only 0.25 µs at that size,
so every time is read as a decimal and kept as **integer nanoseconds**. Durations (``185.504``,
or a JSON float such as ``12.77012757357446``) are rounded to the nearest ns. Differences of
integers are exact; only the final per-step numbers become floats (seconds or µs).

>>> us_to_ns("1736413971558972.912\\t"), us_to_ns(185.504), us_to_ns('"53.741"'), us_to_ns(3)
(1736413971558972912, 185504, 53741, 3000)
>>> ns_to_us(8868217)
8868.217
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from statistics import median_low

DAY_NS = 86_400 * 10**9
MAX_NS = 10**20  # epoch ns beyond year 5000: not a clock reading
MISSING = ("", "N/A", "NA", "None", "null")
_PLAIN = re.compile(r"(\d+)(?:\.(\d{1,3}))?")  # µs with at most ns precision


class TimeValueError(ValueError):
    """A time cell that is not a finite number. ``kind``: ``"missing"``, ``"nan"`` or ``"text"``."""

    def __init__(self, kind: str, value: object) -> None:
        super().__init__(f"{kind}: {value!r}")
        self.kind = kind
        self.value = value


def us_to_ns(value: object) -> int:
    """Microseconds (text, int or float) → integer nanoseconds, exactly for decimal text."""
    if isinstance(value, bool) or value is None:
        raise TimeValueError("missing" if value is None else "text", value)
    if isinstance(value, int):
        return value * 1000
    text = repr(value) if isinstance(value, float) else str(value).strip().strip('"').strip()
    plain = _PLAIN.fullmatch(text)  # the usual "1736413971558932.912": exact without Decimal (10x faster)
    if plain is not None:
        whole, frac = plain.groups()
        return int(whole) * 1000 + (int(frac.ljust(3, "0")) if frac else 0)
    if text in MISSING:
        raise TimeValueError("missing", value)
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise TimeValueError("text", value) from None
    if number.is_nan() or number.is_infinite():
        raise TimeValueError("nan", value)
    return int((number * 1000).to_integral_value(ROUND_HALF_EVEN))


def ns_to_us(ns: int) -> float:
    """Integer ns → µs as a float (``8868217`` → ``8868.217``: the nearest float to the exact value)."""
    return ns / 1000


def implausible_starts(starts: list[int]) -> set[int]:
    """Indices of start times that cannot belong to the same profile: negative, beyond year 5000,
    or more than a day away from the median start (a profile covers seconds to minutes).

    >>> sorted(implausible_starts([10**15, 10**15 + 5, -1, 10**15 + 3, 10**30]))
    [2, 4]
    """
    if not starts:
        return set()
    sane = [s for s in starts if 0 <= s < MAX_NS]
    mid = median_low(sane) if sane else 0
    return {i for i, s in enumerate(starts) if not 0 <= s < MAX_NS or abs(s - mid) > DAY_NS}
