"""What ``passes suggest`` checks before it writes: one step for one plan, a plan that beats the run's,
and GE's own automatic streams as a competitor.

- **One step.** The search prices candidates on the graph the passes receive. What it prints is what
  ``airctl profile --times T --compare`` prints for the applied plan: the suggested file is applied
  (a full apply, in the runs folder, never made the current run) and that run is predicted by
  :func:`airctl.pipeline.predict.predict` — the same function, the same graph, the same number (nothing
  is filed into that run: ``airctl profile RUN --times T --compare`` files the same numbers when asked).
- **Beat the run's plan.** A run that already has a plan is predicted the same way; a suggestion that
  does not beat it is not written.
- **GE's modes** (max-autotune): :func:`airctl.predict.ge_modes.price_ge_modes` prices ``LoadBalance:N``
  and ``WeightedLoadBalance:N`` on the searched graph with the search's own times; when GE's best beats
  the suggestion, the option is recommended instead of a file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.graph.model import Graph
from airctl.modes import Mode
from airctl.pipeline.target import EveryMode
from airctl.predict.plan import ReplayPlan

MARGIN_US = 0.05  # a suggestion must beat the run's plan by more than rounding


@dataclass
class Confirmed:
    """The suggestion as ``profile --times --compare`` predicts the applied plan."""

    ledger: Path
    single_us: float
    suggested_us: float
    racy: bool

    def to_json(self) -> dict[str, Any]:
        return {"ledger": str(self.ledger), "single_stream": self.single_us, "suggested": self.suggested_us,
                "racy": self.racy}


def confirm(passes_file: Path, model: Path, mode: Mode, times: str, *, out_dir: Path, every: EveryMode,
            entry: str | None, device: str | None, say: Callable[[str], None]) -> Confirmed:
    """Apply ``passes_file`` to ``model`` (an apply that does not become the current run) and predict
    it with ``--compare``. The apply is incremental (docs/incremental.md): it starts from a graph a run of
    ``out_dir`` kept, or keeps its own, so the user's next ``passes apply`` of the file skips Dynamo and AOT."""
    from airctl.pipeline.apply import apply_passes
    from airctl.pipeline.predict import PredictRequest, predict
    say("applying the suggestion to check it…")
    target = every.target(model, mode=mode, entry=entry, passes_file=passes_file)
    with keeping_current(out_dir):
        result = apply_passes(target, out=out_dir, plan=False, with_diff=False, report=False, incremental=True)
    if result.error is not None:
        raise result.error
    assert result.ledger_dir is not None
    say("predicting the applied plan…")
    # the numbers only: filing a profile also rebuilds the scratch run's report.html (its graphs, diffs and
    # node chains), the largest part of the check's memory (docs/reliability.md, the wide model)
    outcome = predict(PredictRequest(times=times, source=Path(result.ledger_dir), out_dir=out_dir, device=device,
                                     compare=True, write=False))
    data = outcome.to_json()
    with_ = data["with"]["predicted"]
    return Confirmed(Path(result.ledger_dir), data["without"]["predicted"]["step_us"], with_["valid_step_us"],
                     bool(with_.get("racy")))


def current_step(ledger: Path, times: str, out_dir: Path, device: str | None) -> float | None:
    """The run's own plan, predicted as ``profile --times`` predicts it (its race-free step); None when the
    run has one stream or cannot be predicted. Nothing is written into the user's run."""
    from airctl.errors import AirctlError
    from airctl.pipeline.predict import PredictRequest, predict

    try:
        outcome = predict(PredictRequest(times=times, source=ledger, out_dir=out_dir, device=device, write=False))
    except AirctlError:
        return None
    p = outcome.summary.predicted or {}
    busy = [s for s, us in (p.get("streams") or {}).items() if us and s != "hccl"]
    return p.get("valid_step_us") if len(busy) > 1 else None


def ge_competition(plan: ReplayPlan, graph: Graph, mode: Mode, durations_us: list[float], cores: list[float | None],
                   gap_us: float, latency_us: float, dev: Any) -> list[dict[str, Any]]:
    """GE's automatic modes on the searched graph, priced as the search prices, one launch of the mode
    included (the step `profile --times` prints, as every step suggest shows), fastest first; empty outside
    max-autotune."""
    from airctl.predict.ge_modes import price_ge_modes
    from airctl.predict.step import Conditions

    if not mode.is_ge:
        return []
    cond = Conditions(device=dev, gap_us=gap_us, latency_us=latency_us, launch_us=mode.meaning.launch_us)
    modes = price_ge_modes(plan, graph, durations_us, cores, cond)
    return [m.to_json() for m in sorted(modes, key=lambda m: (m.step_us, m.spec))]


def place(scratch: Path, final: Path, checked: Path) -> None:
    """The checked file, moved to where the user asked for it; the check's run (``checked``) then names
    that file as its pass file, where it named the scratch copy it applied (gone from here on)."""
    from airctl.errors import AirctlError
    from airctl.ledger.index_file import write_index
    from airctl.ledger.reader import Ledger

    shutil.move(str(scratch), str(final))
    try:  # bookkeeping of a scratch run: the file is in place whatever happens here
        index = Ledger.open(checked).index
        index.passes, index.passes_resolved = str(final), str(final.resolve())
        index.notes = [*(index.notes or []), f"the pass file was applied as {scratch.name} and written to {final} "
                                             "(the same passes; its header's predicted step updated)"]
        write_index(checked, index.to_json(), best_effort=True)
    except (AirctlError, OSError):
        pass


@contextlib.contextmanager
def keeping_current(out_dir: Path) -> Iterator[None]:
    """The current run of ``out_dir`` as it was before the block (the compiles ``suggest`` makes to read a
    graph or to check its plan end as every run does, as the current run: `check` or `profile` typed next
    would look at them instead of the user's run). No current run before: none after."""
    from airctl.errors import LedgerError
    from airctl.ledger.pointer import read_pointer
    from airctl.ledger.runs import LATEST, mark_latest

    pointer = Path(out_dir) / LATEST
    try:
        before = read_pointer(pointer) if os.path.lexists(pointer) else None
    except LedgerError:
        before = None
    try:
        yield
    finally:
        if before is not None:
            mark_latest(Path(out_dir), before)
        elif pointer.is_file() and not pointer.is_symlink():
            pointer.unlink()
