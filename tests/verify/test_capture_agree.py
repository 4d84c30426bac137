"""Rules R16-R21 say the same in every command: each rule's model script and pass file (fixtures/checks/
capture) gives one count of its findings in compile, passes apply and profile (their --json, and their
summary as ``show`` prints it again), ``check`` and ``show`` (text and --json), and ``--fail-on check``
exits 1 in each; the corrected twin gives none and exits 0.

Each rule's case compiles and runs its model six times under sim (seconds each): slow. The suite runs
all five commands for two rules (R18 with its pass file, R21 whose count profile's extra call changes)
and, for every other rule, compile against check and show on the failing model and its twin; those
rules through apply and profile too are sweeps (``--sweeps``: R16's model alone runs 128 batch sizes).
The fast lane keeps `check` against `show` on the small run ledgers of the rules that need a run
(R16, R18's may-move half, R21); tests/verify/test_capture_rules.py has every rule's graph fixture
and R18's branches."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import MODELS
from tests.verify.capture_cli import CAPTURE, airctl

PASSES = CAPTURE / "passes"
NONE = PASSES / "none.yaml"  # `passes apply` of a model whose failure needs no pass file


@dataclass(frozen=True)
class Case:
    rule: str
    model: Path
    passes: Path  # the pass file that makes the failure (NONE: the model alone fails)
    twin_model: Path  # the corrected twin: the model ...
    twin_passes: Path  # ... and its pass file
    options: tuple[str, ...] = ()  # --option KEY=VALUE the failure needs (given to every command that runs it)
    per_call: bool = False  # one finding per call of the model: profile's run calls it more often (below)


CASES = [
    Case("stream_budget", CAPTURE / "models" / "moe_serving.py", PASSES / "moe_16_streams.yaml",
         CAPTURE / "models" / "moe_serving.py", PASSES / "moe_2_streams.yaml", ("capture_limit=256",)),
    Case("capture_unsafe_op", CAPTURE / "models" / "scale_item.py", NONE, CAPTURE / "models" / "scale_input.py", NONE),
    Case("wait_moved_by_compiler", CAPTURE / "models" / "kv_cache_write.py", PASSES / "kv_write_wait.yaml",
         CAPTURE / "models" / "kv_cache_write.py", PASSES / "kv_write_wait_ok.yaml"),
    Case("cross_stream_copy_without_event", CAPTURE / "models" / "h2d_staging.py", PASSES / "h2d_on_copy_stream.yaml",
         CAPTURE / "models" / "h2d_staging.py", PASSES / "h2d_on_copy_stream_ok.yaml"),
    Case("core_limits_exceed_device", MODELS / "experts.py", PASSES / "experts_core_limits.yaml",
         MODELS / "experts.py", PASSES / "experts_core_limits_ok.yaml"),
    Case("stale_replay", CAPTURE / "models" / "kv_cache_update.py", NONE, CAPTURE / "models" / "kv_cache_static.py",
         NONE, ("unsafe_skip_npugraph_capture_validation=True",), per_call=True),
]


def _json(output: str) -> dict:
    """The JSON document a command printed (stderr's lines, mixed in by the runner, may come before or after)."""
    start = 0 if output.startswith("{") else output.index("\n{") + 1
    return json.JSONDecoder().raw_decode(output, start)[0]


def _in_rows(rows: list[dict], rule: str) -> int:
    return sum(1 for f in rows if f.get("rule") == rule)


def _in_summary(text: str, rule: str) -> int:
    """The rule's count on the summary's ``verifier:`` line (``rule ×N`` or ``rule``), 0 without one."""
    line = next((ln for ln in text.splitlines() if ln.startswith("verifier:")), "")
    m = re.search(rf"[(,] ?{re.escape(rule)}(?: ×(\d+))?[,)]", line)
    return 0 if m is None else int(m.group(1) or 1)


def _in_check(text: str, rule: str) -> int:
    """Findings of ``rule`` in `check`'s text: a ``severity[rule Rn]`` line per finding, or per line of the
    user's code with ``(×N at this line`` when several share it."""
    count = 0
    for line in text.splitlines():
        if re.search(rf"\b(?:error|warning|info)\[{re.escape(rule)}[\] ]", line):
            same = re.search(r"\(×(\d+) at this line", line)
            count += int(same.group(1)) if same else 1
    return count


def _agree(rule: str, n: int, ran) -> None:  # noqa: ANN001
    """The command just run (``ran``: its result, --json --fail-on check), `check` and `show` (text and
    --json) all count ``n`` findings of ``rule``; the exit codes follow (1 with findings, else 0)."""
    assert ran.exit_code == (1 if n else 0), ran.output
    assert _in_rows(_json(ran.output)["findings"], rule) == n, ran.output
    shown = airctl("show", "--json")
    assert shown.exit_code == 0 and _in_rows(_json(shown.output)["findings"], rule) == n
    shown = airctl("show")
    assert shown.exit_code == 0 and _in_summary(shown.output, rule) == n, shown.output
    checked = airctl("check", "--json")
    assert checked.exit_code == (1 if n else 0) and _in_rows(_json(checked.output)["findings"], rule) == n
    checked = airctl("check")
    assert checked.exit_code == (1 if n else 0) and _in_check(checked.output, rule) == n, checked.output


def _options(case: Case) -> list[str]:
    return [a for opt in case.options for a in ("--option", opt)]


def _details(rule: str, rows: list[dict], shown: str) -> None:
    """What each rule's finding in the failing compile says: the node, the line, the pass that made it."""
    mine = [f for f in rows if f["rule"] == rule and not f.get("other_mode")]
    if rule == "stream_budget":  # 16 experts on 16 streams, captured for 128 batch sizes: past a 910B's 2048
        assert {f["rule"] for f in rows} == {rule} and mine[0]["stage"] == "after:yaml:expert0-on-stream"
        assert "stream budget (910B3): 2176 streams of 2048" in " ".join(shown.split())
    elif rule == "capture_unsafe_op":
        [row] = mine
        assert row["nodes"] == ["_local_scalar_dense"] and row["source"].endswith("scale_item.py:20")
        assert "begins at mm" in row["message"] and row["stage"].startswith("before:")  # there from AOT on
    elif rule == "wait_moved_by_compiler":  # under sim nothing folds the write: said, not faked
        [row] = mine
        assert row["stage"] == "after:yaml:write-waits" and row["source"].endswith("kv_cache_write.py:26")
        assert "reinplace_input_mutated_ops (run after the wait entered the graph)" in row["message"]
        assert "in this run it did not move" in row["message"] and "before: {source:" in row["hint"]
    elif rule == "cross_stream_copy_without_event":
        assert {f["stage"] for f in mine} == {"after:yaml:copy-on-h2d"} and all(f["hint"] for f in mine)
    elif rule == "core_limits_exceed_device":
        [row] = mine
        assert row["stage"] == "after:yaml:expert1-limit" and row["ref"] == "R20"  # the pass that made it
    elif rule == "stale_replay":  # the calls that would have recaptured
        assert sorted(f["message"].split()[1] for f in mine) == ["2", "3"]


PROFILE = ("--steps", "1", "--warmup", "0")  # one step: the calls of one compile, so per-call counts (R21) agree


# the rules all five commands run in the suite; every other rule's apply and profile legs are sweeps
THROUGH_EVERY_COMMAND = ("wait_moved_by_compiler", "stale_replay")


def _compiled_agrees(case: Case) -> int:
    """The failing compile: its count of findings, which check and show repeat, and what they say."""
    opts, fail = _options(case), ("--json", "--fail-on", "check")
    passes = ["--passes", case.passes] if case.passes != NONE else []
    r = airctl("compile", case.model, "--mode", "npugraph_ex", *passes, *opts, *fail)
    n = _in_rows(_json(r.output)["findings"], case.rule)
    assert n > 0, r.output
    _agree(case.rule, n, r)
    _details(case.rule, _json(r.output)["findings"], airctl("show").output)
    return n


def _twin_compiled_agrees(case: Case) -> None:
    opts, fail = _options(case), ("--json", "--fail-on", "check")
    twin_passes = ["--passes", case.twin_passes] if case.twin_passes != NONE else []
    _agree(case.rule, 0, airctl("compile", case.twin_model, "--mode", "npugraph_ex", *twin_passes, *opts, *fail))


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if c.rule not in THROUGH_EVERY_COMMAND], ids=lambda c: c.rule)
def test_each_rule_agrees_in_compile_check_and_show(workdir: Path, case: Case) -> None:
    """The rules whose apply and profile legs are sweeps: compile, check and show, the twin silent."""
    _compiled_agrees(case)
    _twin_compiled_agrees(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c if c.rule in THROUGH_EVERY_COMMAND else pytest.param(c, marks=pytest.mark.sweep)
                                  for c in CASES], ids=lambda c: c.rule)
def test_each_rule_agrees_in_compile_apply_profile_check_and_show(workdir: Path, case: Case) -> None:
    opts, fail = _options(case), ("--json", "--fail-on", "check")
    n = _compiled_agrees(case)
    _agree(case.rule, n, airctl("passes", "apply", case.passes, *opts, *fail))
    profiled = airctl("profile", *PROFILE, *opts, *fail)
    if case.per_call:  # profile runs its step once more first (its result check): 6 calls, 5 replays, not 2
        assert _in_rows(_json(profiled.output)["findings"], case.rule) > n, profiled.output
        n = _in_rows(_json(profiled.output)["findings"], case.rule)
    _agree(case.rule, n, profiled)
    # the corrected twin: silent everywhere
    _twin_compiled_agrees(case)
    _agree(case.rule, 0, airctl("passes", "apply", case.twin_passes, *opts, *fail))
    _agree(case.rule, 0, airctl("profile", *PROFILE, *opts, *fail))


LEDGERS = {"stream_budget": 1, "stale_replay": 2, "movable_wait": 1,
           "stream_budget_ok": 0, "stale_replay_ok": 0, "movable_wait_ok": 0}


@pytest.mark.parametrize("name", sorted(LEDGERS))
def test_check_and_show_agree_on_the_run_ledgers(name: str) -> None:
    """The fast lane's case: the rules that need a run (R16, R18's may-move half, R21) over the small
    ledgers of fixtures/checks/capture/ledgers, whose index holds what the end of their run recorded."""
    ledger = CAPTURE / "ledgers" / name
    rule = {"movable_wait": "wait_moved_by_compiler"}.get(name.removesuffix("_ok"), name.removesuffix("_ok"))
    n = LEDGERS[name]
    shown = airctl("show", ledger, "--json")
    assert shown.exit_code == 0 and _in_rows(_json(shown.output)["findings"], rule) == n
    shown = airctl("show", ledger)
    assert shown.exit_code == 0 and _in_summary(shown.output, rule) == n, shown.output
    checked = airctl("check", ledger, "--json")
    assert checked.exit_code == (1 if n else 0) and _in_rows(_json(checked.output)["findings"], rule) == n
    checked = airctl("check", ledger)
    assert checked.exit_code == (1 if n else 0) and _in_check(checked.output, rule) == n, checked.output


@pytest.mark.slow
def test_the_compile_summary_counts_what_its_json_counts(workdir: Path) -> None:
    """The text summary of `compile` itself (not `show` of it): R18's fixture."""
    r = airctl("compile", CAPTURE / "models" / "kv_cache_write.py", "--mode", "npugraph_ex", "--passes",
               PASSES / "kv_write_wait.yaml", "--fail-on", "check")
    assert r.exit_code == 1 and _in_summary(r.output, "wait_moved_by_compiler") == 1, r.output
    assert "in this run it did not move" in r.output  # under sim no pass folds the write: said, not faked
