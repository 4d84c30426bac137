"""Timing: how long each pass took (``facts["seconds"]``), MLIR's ``PassTiming`` for airctl."""

from __future__ import annotations

import time

from airctl.instrument import PassRun


class Timing:
    def __init__(self) -> None:
        self._start: dict[int, float] = {}

    def before_pass(self, run: PassRun) -> None:
        self._start[id(run)] = time.perf_counter()

    def after_pass(self, run: PassRun) -> None:
        run.facts["seconds"] = round(time.perf_counter() - self._start.pop(id(run), time.perf_counter()), 6)

    def after_pass_failed(self, run: PassRun, error: BaseException) -> None:
        self.after_pass(run)
