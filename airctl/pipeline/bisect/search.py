"""The two searches of ``airctl bisect``: the first bad prefix (binary search) and delta debugging.

Both take a ``test`` that compiles one configuration and says whether it is bad, and call it as
few times as they can; results are cached by the caller.

- :func:`first_bad_prefix`: given that the empty prefix is good and the whole list is bad, the
  smallest ``k`` whose prefix ``items[:k]`` is bad — ``items[k-1]`` is the element that turns it
  bad. ``ceil(log2(n))`` tests (LLVM's ``-opt-bisect-limit``, PyTorch's CompilerBisector).
- :func:`ddmin`: Zeller and Hildebrandt's minimizing delta debugging — a subset of a failing set
  that still fails and from which no single element can be removed (1-minimal). When one element
  alone fails it takes about ``2 log2(n)`` tests.

>>> first_bad_prefix(list("abcdefgh"), lambda prefix: "f" in prefix)
6
>>> ddmin(list(range(8)), lambda keep: 3 in keep and 5 in keep)
[3, 5]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def first_bad_prefix(items: Sequence[Any], test: Callable[[list[Any]], bool]) -> int:
    """Smallest ``k`` in ``1..len(items)`` with ``test(items[:k])`` true; assumes ``test([])`` false and
    ``test(items)`` true (neither is called)."""
    good, bad = 0, len(items)
    while bad - good > 1:
        mid = (good + bad) // 2
        if test(list(items[:mid])):
            bad = mid
        else:
            good = mid
    return bad


def ddmin(items: Sequence[Any], test: Callable[[list[Any]], bool]) -> list[Any]:
    """A 1-minimal subset of ``items`` (order kept) for which ``test`` is true; assumes ``test(items)``."""
    current = list(items)
    n = 2
    while len(current) >= 2:
        size = len(current)
        chunks = [current[i * size // n:(i + 1) * size // n] for i in range(n)]
        chunks = [c for c in chunks if c]
        reduced = False
        for chunk in chunks:  # reduce to a subset
            if test(chunk):
                current, n, reduced = chunk, 2, True
                break
        if not reduced and n > 2:  # reduce to a complement
            for chunk in chunks:
                rest = [x for x in current if x not in chunk]
                if test(rest):
                    current, n, reduced = rest, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= len(current):
                break
            n = min(2 * n, len(current))
    return current
