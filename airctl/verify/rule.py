"""What a verifier rule is: its id, TorchAir rule, per-mode severity, fix hint and where it can be seen.

The catalogue itself is :mod:`airctl.verify.rules` (R1-R15 and the checks beside them) with
:mod:`airctl.verify.capture_catalogue` (R16-R21); both build on this one type.
"""

from __future__ import annotations

from dataclasses import dataclass

from airctl.modes import Mode


@dataclass(frozen=True)
class Rule:
    id: str
    ref: str | None  # reference/torchair.md §2.3 rule number(s)
    title: str
    max_autotune: str | None  # severity in max-autotune (GE), None = not applicable
    reduce_overhead: str | None  # severity in reduce-overhead (aclgraph)
    dialects: tuple[str, ...]  # graph dialects the rule is checked on
    hint: str
    seen_in: tuple[str, ...] = ()  # the artifacts that can show it (ARTIFACTS)
    seen_how: str = ""  # what it looks like there, when that differs from the FX graph
    mode_hints: tuple[tuple[Mode, str], ...] = ()  # (mode, hint) where the fix depends on the mode

    def severity(self, mode: Mode) -> str | None:
        return self.max_autotune if Mode.parse(mode).is_ge else self.reduce_overhead

    def hint_for(self, mode: Mode) -> str:
        """The fix for the run's mode: a fix that cleans one mode's plan may leave a race in the other."""
        return dict(self.mode_hints).get(mode, self.hint)


ARTIFACTS = {
    "fx": "FX stage (ledger, TORCH_COMPILE_DEBUG file)",
    "listing": "graph() listing / DEBUG log",
    "log": "DEBUG log lines",
    "ge-dump": "GE dump (pbtxt, txt)",
    "pass-runner": "airctl's pass runner",
}
FX_ARTIFACTS = ("fx", "listing")
