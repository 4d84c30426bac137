"""Which action each profiler step gets: torch_npu's ``Schedule`` and ``ProfilerAction``.

Separate from :mod:`.profiler` because it is a pure function of the step number, which
``profile``'s state machine consults at every ``step()``.
"""

from __future__ import annotations

import enum
import warnings
from typing import Any


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3



class Schedule:
    """Which action each step gets: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` warm-up and ``active`` recorded steps; the last active step of a cycle saves.
    ``repeat`` = 0 cycles forever. With ``skip_first_wait`` the first cycle has no wait.

    >>> s = Schedule(wait=0, warmup=0, active=1, repeat=1)
    >>> [s(i).name for i in range(3)]
    ['RECORD_AND_SAVE', 'NONE', 'NONE']
    """

    def __init__(self, wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0,
                 skip_first_wait: int = 0) -> None:
        self.wait = _non_negative("wait", wait, 0)
        self.warmup = _non_negative("warmup", warmup, 0)
        self.active = active if isinstance(active, int) and active > 0 else _reset("active", 1)
        self.repeat = _non_negative("repeat", repeat, 0)
        self.skip_first = _non_negative("skip_first", skip_first, 0)
        self.skip_first_wait = skip_first_wait if isinstance(skip_first_wait, int) else _reset("skip_first_wait", 0)

    def __call__(self, step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"profiler step must be >= 0, got {step}")
        if step < self.skip_first:
            return ProfilerAction.NONE
        step -= self.skip_first
        if self.skip_first_wait:
            step += self.wait
        cycle = self.wait + self.warmup + self.active
        if self.repeat and step // cycle >= self.repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < self.wait:
            return ProfilerAction.NONE
        if pos < self.wait + self.warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if pos == cycle - 1 else ProfilerAction.RECORD



def _reset(name: str, value: int) -> int:
    warnings.warn(f"torch_npu.profiler.schedule: invalid {name}, using {value}", stacklevel=3)
    return value


def _non_negative(name: str, value: Any, default: int) -> int:
    return value if isinstance(value, int) and value >= 0 else _reset(name, default)

