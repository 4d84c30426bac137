"""One verdict per run: the last stage's findings are the run's, earlier ones a later pass removed are
"fixed by" that pass (airctl/verify/instrument.py ``verdict``, the ledger's ``fixed_findings``)."""

from __future__ import annotations

from pathlib import Path

from airctl.io.read import read_graph
from airctl.verify.instrument import VerifyEach

CHECKS = Path(__file__).resolve().parents[2] / "fixtures" / "checks"


def test_a_race_the_next_pass_closes_is_fixed_by_it_and_not_the_runs() -> None:
    """The docs' seed: the scope pass leaves two races, its wait before sub closes one."""
    racy = read_graph(CHECKS / "fx" / "race_cross_stream_without_wait.json")
    fixed = read_graph(CHECKS / "ok" / "seed_docs.json")
    inst = VerifyEach("reduce-overhead")
    inst.before_pass("yaml:scope", read_graph(CHECKS / "ok" / "seed_clean.json"))
    inst.after_pass("yaml:scope", racy)
    inst.after_pass("yaml:wait", fixed)
    final, gone = inst.verdict()
    assert [(stage, f.nodes) for stage, f in final] == [("after:yaml:scope", ["abs_1", "add"])]
    assert [(stage, f.nodes, by) for stage, f, by in gone] == [("after:yaml:scope", ["mm", "sub"], "after:yaml:wait")]


def test_a_race_still_in_the_last_stage_is_the_runs_at_the_stage_it_appeared() -> None:
    racy = read_graph(CHECKS / "fx" / "race_cross_stream_without_wait.json")
    inst = VerifyEach("reduce-overhead")
    inst.before_pass("yaml:scope", read_graph(CHECKS / "ok" / "seed_clean.json"))
    inst.after_pass("yaml:scope", racy)
    inst.after_pass("view_to_reshape", racy)
    final, gone = inst.verdict()
    assert gone == [] and len(final) == 2
    assert {stage for stage, _ in final} == {"after:yaml:scope"}
