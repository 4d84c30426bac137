"""The bad finding ``airctl bisect`` starts from, kept by identity through every step.

A condition such as "a stream race is reported" is true of many runs for different reasons. With
three passes where the third adds the wait the first lacked and the second's race remains, "any
race" would make the one-pass prefix bad (the first pass's race, which the file no longer has) and
would name the wrong culprit, with a "why" about that race. So the full file's run fixes
*which* problem is searched for:

==========  ===============================================================================
race        each race: its reader node, the stream pair, and its producer (a producer renamed
            by TorchAir's reinplacing still matches on reader and streams)
check       each error finding: its rule and nodes
numerics    each output that differs from eager (``out[0]``), or the YAML pass whose eager
            check changed the results
others      the condition itself (compile, --bad-if, --bad-cmd carry no identity)
==========  ===============================================================================

:class:`TrackedCondition` wraps the condition: a step is bad only when it shows one of the
starting run's problems, and its "why" describes that problem (``same`` says which).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from airctl.pipeline.bisect.conditions import Condition, Verdict

_OUTPUT = re.compile(r"^(out[^\s:]*)")


@dataclass(frozen=True)
class Problem:
    """One bad finding of a run, comparable across the runs of a bisection."""

    kind: str
    key: tuple[str, ...]  # what must match
    loose: tuple[str, ...]  # what matches when a producer was renamed (races only)
    text: str  # how the run said it

    def same_as(self, other: Problem) -> bool:
        return self.kind == other.kind and (self.key == other.key or (bool(self.loose) and self.loose == other.loose))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": list(self.key), "text": self.text}


def problems_of(condition: Condition, result: Any) -> list[Problem]:
    """The bad findings a run shows for ``condition`` (empty: none, or a condition with no identity)."""
    index = result.index
    if condition.kind == "race":
        out = []
        for r in (index.execution or {}).get("races") or []:
            reader, producer = str(r.get("reader")), str(r.get("producer"))
            streams = (str(r.get("reader_stream")), str(r.get("producer_stream")))
            out.append(Problem("race", (reader, producer, *streams), (reader, *streams), str(r.get("message"))))
        return out
    if condition.kind == "check":
        from airctl.pipeline.check import check_source

        findings = check_source(result.ledger_dir, mode=index.run_mode).findings
        return [Problem("check", (f.rule, *sorted(f.nodes)), (), f"{f.rule}: {f.message}")
                for f in findings if f.severity == "error"]
    if condition.kind == "numerics":
        out = []
        for stage in index.stages():
            check = stage.entry.eager_check or {}
            if check.get("matches") is False:
                out.append(Problem("numerics", ("stage", stage.name), (), f"{stage.name} changes the results"))
        for text in (index.execution or {}).get("mismatches") or []:
            m = _OUTPUT.match(str(text))
            out.append(Problem("numerics", ("output", m.group(1) if m else str(text)), (), str(text)))
        return out
    return []


@dataclass
class TrackedCondition:
    """``condition``, narrowed to the problems of the starting run once :meth:`start` has seen it."""

    condition: Condition
    target: list[Problem] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.condition.kind

    @property
    def atol(self) -> float:
        return self.condition.atol

    def describe(self) -> str:
        return self.condition.describe()

    def start(self, result: Any, verdict: Verdict) -> list[Problem]:
        """Remember what the starting run shows (call with its verdict, when it is bad)."""
        if verdict.bad:
            self.target = problems_of(self.condition, result)
        return self.target

    def judge(self, result: Any) -> Verdict:
        verdict = self.condition.judge(result)
        if not verdict.bad or not self.target:
            return verdict
        shown = problems_of(self.condition, result)
        same = [p for p in shown if any(p.same_as(t) for t in self.target)]
        if same:
            return Verdict(True, same[0].text)
        other = shown[0].text if shown else verdict.why
        return Verdict(False, f"bad, but not with the starting run's problem (it shows: {other})")
