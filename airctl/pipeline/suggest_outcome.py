"""What ``airctl passes suggest`` found (:class:`SuggestOutcome`), and the line of predicted steps
that its terminal view, ``--json`` and the written file's header share (:func:`predicted_line`).

Split from :mod:`airctl.pipeline.suggest`, which searches: this is the result and how its steps
are derived from the mode (every step shown is the kernels plus one launch of the mode).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.modes import Mode
from airctl.pipeline.suggest_check import Confirmed

NOTHING = "no plan beats a single stream"
NOTHING_FROM = "no addition beats the plan of --from"


@dataclass
class SuggestOutcome:
    ledger_dir: Path
    graph: str
    mode: Mode
    times_from: str
    single_us: float
    suggested_us: float
    lower_bound_us: float
    method: str
    evaluated: int
    candidates: int | None
    streams: int
    current_us: float | None = None
    regions: list[dict[str, Any]] = field(default_factory=list)
    passes_file: Path | None = None
    text: str | None = None
    notes: list[str] = field(default_factory=list)
    from_file: Path | None = None
    stage: str = "pre"
    model: str | None = None  # the model script the plan is for (the ledger's)
    confirmed: Confirmed | None = None  # the applied suggestion, predicted as `profile --times --compare` does
    ge_modes: list[dict[str, Any]] = field(default_factory=list)  # GE's automatic modes, priced (max-autotune)
    recommend: str | None = None  # the option to give instead of a file, when GE's mode is faster
    beaten_by_current: bool = False  # the run's own plan is no slower: nothing written
    memory: dict[str, Any] | None = None  # with --memory-budget: the peaks and what the budget cost

    @property
    def launch_us(self) -> float:
        """The mode's host cost of one graph execution. single_us, suggested_us and lower_bound_us are the
        search's spans of kernels; every step shown (the rows, the file's header, ge_modes, --json) adds
        it, as `airctl profile --times` does, so a plan has one predicted step wherever it is printed."""
        return self.mode.meaning.launch_us

    @property
    def single_step_us(self) -> float:
        return self.confirmed.single_us if self.confirmed is not None else self.single_us + self.launch_us

    @property
    def suggested_step_us(self) -> float:
        return self.confirmed.suggested_us if self.confirmed is not None else self.suggested_us + self.launch_us

    @property
    def message(self) -> str | None:
        if self.recommend:
            return f"GE's automatic streams beat this plan: give --option {self.recommend} instead"
        if self.beaten_by_current:
            return f"no plan beats the run's own ({self.current_us:.1f} µs)"
        return None if self.improves else NOTHING_FROM if self.from_file is not None else NOTHING

    @property
    def improves(self) -> bool:
        return self.text is not None

    def to_json(self) -> dict[str, Any]:
        # steps, launch included (with the check: what `profile --times --compare` prints for the applied
        # plan); the lower bound is the search's, of kernels alone on the graph it searched
        predicted = {"single_stream": self.single_step_us, "current_plan": self.current_us,
                     "suggested": self.suggested_step_us, "lower_bound": self.lower_bound_us,
                     "launch": self.launch_us}
        saved = self.single_step_us - self.suggested_step_us
        return {"ledger": str(self.ledger_dir), "graph": self.graph, "mode": self.mode.value,
                "times_from": self.times_from,
                "checked": self.confirmed.to_json() if self.confirmed else None, "ge_modes": self.ge_modes,
                "recommend_option": self.recommend, "memory": self.memory,
                "streams": self.streams, "stage": self.stage, "predicted_us": predicted, "saved_us": saved,
                "search": {"method": self.method, "evaluated": self.evaluated, "candidates": self.candidates},
                "regions": self.regions, "passes_file": str(self.passes_file) if self.passes_file else None,
                "message": self.message, "notes": self.notes,
                "from": str(self.from_file) if self.from_file else None}



def predicted_line(out: SuggestOutcome) -> str:
    """The header's line of steps: the search's until the check has predicted the applied file, then that."""
    return (f"Predicted device step ({out.times_from}, one launch of {out.launch_us:.0f} µs included): single "
            f"stream {out.single_step_us:.1f} µs -> {out.suggested_step_us:.1f} µs with this plan ({out.streams} "
            f"streams at most; kernels alone at least {out.lower_bound_us:.1f} µs, {out.method} search).")
