"""Every fixture under fixtures/checks/ gives exactly the findings written beside it.

Fixtures are graph JSON (fx/, ge/, ok/) and what TorchAir itself wrote for ``fixtures/imports/streams.py``'s
misuse variants (logs/: DEBUG logs, listings/: `graph():` listings, dumps/: GE dumps), read the way
``airctl check FILE`` reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.io.json_io import read_json
from airctl.verify import RULES, verify
from airctl.verify.inputs import load_targets

CHECKS = Path(__file__).resolve().parents[2] / "fixtures" / "checks"
EXPECTS = sorted(p for p in CHECKS.rglob("*.expect.json") if p.parent.name != "passes")


def _targets(path: Path) -> list:
    """Hand-made JSON graphs unchecked (some name missing nodes on purpose); TorchAir's files as `check` reads them."""
    if path.suffix == ".json":
        from airctl.verify.inputs import CheckTarget

        return [CheckTarget(path.name, read_json(path))]
    return load_targets(path)


def _key(f: dict) -> tuple:
    return f["rule"], f["severity"], tuple(sorted(f["nodes"]))


@pytest.mark.parametrize("expect_path", EXPECTS, ids=lambda p: str(p.relative_to(CHECKS)).replace(".expect.json", ""))
def test_fixture_gives_exactly_its_findings(expect_path: Path) -> None:
    doc = json.loads(expect_path.read_text())
    targets = _targets(expect_path.parent / doc["graph"])
    for mode, want in doc["expect"].items():
        found = [f for t in targets for f in (*verify(t.graph, mode), *t.findings)]
        got = [{"rule": f.rule, "severity": f.severity, "nodes": f.nodes} for f in found]
        assert sorted(map(_key, got)) == sorted(map(_key, want)), (mode, got)


# rules a command computes from a whole run rather than a graph, and the test that reproduces each
BY_COMMAND = {"memory_increase": "tests/pipeline/test_suggest_memory.py (check --max-memory-increase)"}


def test_every_rule_has_a_bad_fixture() -> None:
    flagged: set[str] = set()
    for p in CHECKS.rglob("*.expect.json"):
        for findings in json.loads(p.read_text())["expect"].values():
            flagged.update(f["rule"] for f in findings)
    assert flagged | set(BY_COMMAND) == set(RULES) and not flagged & set(BY_COMMAND)


def test_bad_fixtures_are_flagged_only_with_their_rule() -> None:
    for p in (CHECKS / "fx").glob("*.expect.json"):
        rule_of_file = next(r for r in RULES if p.name.startswith(r))
        doc = json.loads(p.read_text())
        graph = read_json(p.parent / doc["graph"])
        rules = {f.rule for mode in doc["expect"] for f in verify(graph, mode)}
        assert rules == {rule_of_file}, p.name


@pytest.mark.parametrize("folder", ["logs", "listings", "dumps"])
def test_torchair_artifacts_show_their_rule_in_max_autotune(folder: str) -> None:
    """Each file TorchAir wrote for a misuse shows that misuse (named by the file) and nothing else in GE's mode."""
    expects = sorted((CHECKS / folder).glob("*.expect.json"))
    assert expects
    for p in expects:
        rule_of_file = max((r for r in RULES if p.name.startswith(r)), key=len)
        targets = load_targets(p.parent / json.loads(p.read_text())["graph"])
        rules = {f.rule for t in targets for f in (*verify(t.graph, "max-autotune"), *t.findings)}
        assert rules == {rule_of_file}, p.name


def test_every_rule_says_which_artifacts_show_it() -> None:
    from airctl.verify.rule import ARTIFACTS

    for rule in RULES.values():
        assert rule.seen_in and set(rule.seen_in) <= set(ARTIFACTS), rule.id
        if "ge-dump" in rule.seen_in:
            assert "ge" in rule.dialects, rule.id


@pytest.mark.parametrize("name", ["seed_clean", "two_stream_plan"])
@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_correct_plans_have_no_findings(name: str, mode: str) -> None:
    assert verify(read_json(CHECKS / "ok" / f"{name}.json"), mode) == []


def test_seed_without_wait_races_only_in_reduce_overhead() -> None:
    graph = read_json(CHECKS / "fx" / "race_cross_stream_without_wait.json")
    ro = verify(graph, "reduce-overhead")
    assert {(f.rule, f.severity) for f in ro} == {("race_cross_stream_without_wait", "error")}
    assert {tuple(f.nodes) for f in ro} == {("abs_1", "add"), ("mm", "sub")}
    assert not [f for f in verify(graph, "max-autotune") if f.severity == "error"]


def test_docs_seed_is_clean_in_ge_and_races_on_add_in_aclgraph() -> None:
    """The published pass waits before `sub` only; aclgraph runs `add` (reading abs_1) before that wait."""
    graph = read_json(CHECKS / "ok" / "seed_docs.json")
    assert verify(graph, "max-autotune") == []
    [f] = verify(graph, "reduce-overhead")
    assert (f.rule, f.nodes) == ("race_cross_stream_without_wait", ["abs_1", "add"])
    assert "record" in f.hint and "wait" in f.hint


def test_docs_say_which_artifacts_show_each_rule() -> None:
    """docs/checks.md "What each artifact can show" has one row per rule, ticked as its seen_in says."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "checks.md").read_text()
    table = docs.split("## What each artifact can show", 1)[1].split("\n\n(")[0]
    columns = ["fx", "listing", "log", "ge-dump", "pass-runner"]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = {col for col, cell in zip(columns, cells[1:6], strict=True) if cell == "✓"}
    assert rows == {rule.id: set(rule.seen_in) for rule in RULES.values()}
