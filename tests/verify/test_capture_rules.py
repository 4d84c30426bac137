"""Rules R16-R21 (capture safety, device budgets): each fires on its fixture and is silent on its twin,
the device table's figures are what they are checked against, and no shipped graph fixture gets a
finding of them unless it was made to (the false-positive sweep over graph files; the compiled models
and pass files are swept in tests/verify/test_capture_runs.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.graph.model import Graph, Node
from airctl.io.json_io import read_json
from airctl.verify import verify
from airctl.verify.capture_catalogue import CAPTURE_RULES
from airctl.verify.inputs import load_targets

REPO = Path(__file__).resolve().parents[2]
CAPTURE = REPO / "fixtures" / "checks" / "capture"
NEW = {r.id for r in CAPTURE_RULES}
MODES = ("max-autotune", "reduce-overhead", "npugraph_ex")
runner = CliRunner()


def _findings(path: Path, mode: str) -> list:
    if path.suffix == ".json":
        return verify(read_json(path), mode)
    return [f for t in load_targets(path) for f in (*verify(t.graph, mode), *t.findings)]


def _fixture(name: str) -> tuple[Path, dict]:
    doc = json.loads((CAPTURE / f"{name}.expect.json").read_text())
    return CAPTURE / doc["graph"], doc["expect"]


# fixture -> (its rule, its corrected twin)
RULE_OF = {"core_limits_exceed_device_set_stream_limit": ("core_limits_exceed_device", "core_limits_exceed_device_ok"),
           "movable_wait": ("wait_moved_by_compiler", "movable_wait_ok")}
BAD = ["capture_unsafe_op", "wait_moved_by_compiler", "movable_wait", "cross_stream_copy_without_event",
       "core_limits_exceed_device", "core_limits_exceed_device_set_stream_limit", "stream_budget", "stale_replay"]


def _rule(name: str) -> tuple[str, str]:
    return RULE_OF.get(name, (name, f"{name}_ok"))


@pytest.mark.parametrize("name", BAD)
def test_each_rule_fires_on_its_fixture_and_not_on_the_corrected_twin(name: str) -> None:
    rule, twin_name = _rule(name)
    path, expect = _fixture(name)
    fired = [m for m in expect if any(f.rule == rule for f in _findings(path, m))]
    assert fired == [m for m, want in expect.items() if any(w["rule"] == rule for w in want)] and fired
    twin, twin_expect = _fixture(twin_name)
    for mode in twin_expect:
        assert not [f for f in _findings(twin, mode) if f.rule in NEW], (rule, mode)


@pytest.mark.parametrize("name", BAD)
def test_findings_name_the_node_the_line_and_a_hint(name: str) -> None:
    path, expect = _fixture(name)
    mode = next(m for m, want in expect.items() if want)
    rule = _rule(name)[0]
    for f in [f for f in _findings(path, mode) if f.rule == rule]:
        assert f.nodes and f.ref and f.ref.startswith("R") and f.hint, f
        assert f.source and f.source.startswith("model.py:"), f


@pytest.mark.parametrize("name", BAD)
def test_check_exits_1_on_each_fixture_and_0_on_its_twin(name: str) -> None:
    path, expect = _fixture(name)
    mode = next(m for m, want in expect.items() if want)
    twin, _ = _fixture(_rule(name)[1])
    assert runner.invoke(build_app(), ["check", str(path), "--mode", mode]).exit_code == 1
    assert runner.invoke(build_app(), ["check", str(twin), "--mode", mode]).exit_code == 0


def test_check_json_carries_the_rule_id_and_ref() -> None:
    r = runner.invoke(build_app(), ["check", str(CAPTURE / "ledgers" / "stale_replay"), "--json"])
    doc = json.loads(r.output)
    assert {(f["rule"], f["ref"], f["mode"]) for f in doc["findings"]} == {("stale_replay", "R21", "npugraph_ex")}
    assert {f["source"] for f in doc["findings"]} == {"model.py:31"}


def test_stream_core_limits_reads_both_forms_the_wheel_writes() -> None:
    from airctl.verify.core_limits import stream_core_limits

    before = stream_core_limits(read_json(CAPTURE / "core_limits_exceed_device.json"))
    after = stream_core_limits(read_json(CAPTURE / "core_limits_exceed_device_set_stream_limit.json"))
    assert before == after == {"graph_1_stream": (24, 48), None: (24, 48)}
    assert stream_core_limits(read_json(CAPTURE / "core_limits_exceed_device_ok.json")) == {
        "graph_1_stream": (8, 16), None: (8, 16)}


def test_core_limits_are_checked_against_the_device_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """16 cube cores per stream fit a chip of 40 (cube and vector apart): no finding; the table's
    figures are read, not the rule's own."""
    import airctl.devices as devices

    graph = read_json(CAPTURE / "core_limits_exceed_device.json")
    assert [f.rule for f in verify(graph, "npugraph_ex")] == ["core_limits_exceed_device"]
    big = SimpleNamespace(name="big", ai_cores=20, cube_cores=48, vector_cores=96)
    monkeypatch.setattr(devices, "device", lambda name=None: big)
    assert verify(graph, "npugraph_ex") == []
    only_vector = SimpleNamespace(name="v", ai_cores=20, cube_cores=48, vector_cores=64)
    monkeypatch.setattr(devices, "device", lambda name=None: only_vector)
    [f] = verify(graph, "npugraph_ex")
    assert "vector (AIV) limits add up to 96" in f.message and "cube" not in f.message.split(":")[1]


def _budget_graph(side: int) -> Graph:
    from fixtures.checks.capture.make_capture import budget_graph

    return budget_graph(side)


def test_stream_budget_warns_past_the_stated_fraction_and_errs_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import airctl.devices as devices
    from airctl.verify.budgets import WARN_FRACTION, budget_findings

    graph = _budget_graph(3)  # 4 streams, 7 events (3 records, 1 fork, 3 joins) per capture
    monkeypatch.setattr(devices, "device", lambda name=None: SimpleNamespace(name="d", ai_cores=20, max_streams=100,
                                                                            max_events=1000))
    assert WARN_FRACTION == 1920 / 2048
    assert budget_findings({"g": graph}, {"g": 23}, "npugraph_ex") == []  # 92 streams: under 15/16 of 100
    [warn] = budget_findings({"g": graph}, {"g": 24}, "npugraph_ex")  # 96 streams
    assert (warn.rule, warn.severity, warn.nodes) == ("stream_budget", "warning", ["scope_enter_0"])
    [err] = budget_findings({"g": graph}, {"g": 26}, "npugraph_ex")  # 104 streams
    assert err.severity == "error" and "104 streams" in err.message and "capture_limit" in err.hint
    found = budget_findings({"g": graph}, {"g": 143}, "npugraph_ex")  # 572 streams, 1001 events
    assert [(f.severity, "events" in f.message) for f in found] == [("error", False), ("error", True)]


def test_stream_budget_counts_events_the_same_before_and_after_the_closure_pass() -> None:
    """The aclgraph closure events are counted whether or not the stage holds them, so fx-final and
    the stage after apply_event_closure_with_multi_stream give one count."""
    from airctl.verify.budgets import graph_budget

    graph = _budget_graph(2)
    closed = Graph(graph.name, "fx", [Node("fork", "npugraph_ex.tagged_event_record.default", attrs={
        "args": ["graph_1_arg0_1", True]}, kind="call_function"), *graph.nodes])
    assert graph_budget(graph, "npugraph_ex") == graph_budget(closed, "npugraph_ex")
    assert graph_budget(graph, "npugraph_ex").events == 2 + 1 + 2
    assert graph_budget(graph, "max-autotune").events == 2


def test_stale_replay_is_taken_from_npugraph_ex_bookkeeping() -> None:
    """The observer compares each call's mutated inputs with the captured addresses, only when the
    recapture check is skipped, for a key that was captured."""
    from airctl.hooks.npugraph_ex_observers import stale_replay

    class T:
        def __init__(self, ptr: int) -> None:
            self.ptr = ptr

        def data_ptr(self) -> int:
            return self.ptr

    graph = SimpleNamespace(config={"unsafe_skip_npugraph_capture_validation": True},
                            _unupdated_input_func=lambda *a: "k",
                            _graphs_meta={"k": SimpleNamespace(captured_mutated_inputs={0: 100})})
    assert stale_replay(graph, (T(100), T(5))) is None
    row = stale_replay(graph, (T(200), T(5)))
    assert row is not None and (row["event"], row["inputs"]) == ("stale_replay", [0])
    graph.config = {}
    assert stale_replay(graph, (T(200), T(5))) is None  # validated: npugraph_ex recaptures itself


@pytest.mark.parametrize(("node", "unsafe"), [
    (Node("b", "aten.bincount.default", ["x"], attrs={"args": ["%x"], "kwargs": {"minlength": 8}}), False),
    (Node("c", "aten._to_copy.default", ["x"], attrs={"args": ["%x"], "kwargs": {"dtype": "torch.float16"}}), False),
    (Node("n", "aten.nonzero_static.default", ["x"], attrs={"args": ["%x"], "kwargs": {"size": 4}}), False),
    (Node("r", "aten.repeat_interleave.Tensor", ["x"], attrs={"args": ["%x"]}), True),
    (Node("p", "aten._to_copy.default", ["x"], attrs={"args": ["%x"], "kwargs": {"pin_memory": True}}), True),
])
def test_capture_unsafe_ops(node: Node, unsafe: bool) -> None:
    from airctl.verify.capture_unsafe import why_unsafe

    assert (why_unsafe(node) is not None) is unsafe


def test_a_copy_race_is_one_finding_not_two() -> None:
    found = verify(read_json(CAPTURE / "cross_stream_copy_without_event.json"), "reduce-overhead")
    assert [(f.rule, f.nodes) for f in found] == [("cross_stream_copy_without_event", ["_to_copy", "mm"])]


def test_moved_wait_needs_one_file_and_a_guarded_op() -> None:
    graph = read_json(CAPTURE / "wait_moved_by_compiler.json")
    for node in graph.nodes:  # the guarded op written in another file: no order to compare
        if node.name == "add_":
            node.source = "other.py:99"
    assert "wait_moved_by_compiler" not in {f.rule for f in verify(graph, "max-autotune")}


def _graph_files() -> list[Path]:
    """Every graph file under fixtures/ that `airctl check` reads, but the capture rules' own bad ones."""
    bad = {(CAPTURE / f"{n}.json") for n in BAD} | {CAPTURE / "ledgers" / n for n in BAD}
    files = [p for p in (REPO / "fixtures").rglob("*.json") if not p.name.endswith(".expect.json")
             and p.parent.name not in ("profiles",) and p not in bad]
    files += [p for p in (REPO / "fixtures" / "checks").rglob("*") if p.suffix in (".pbtxt", ".txt", ".log")]
    files += [p for p in (CAPTURE / "ledgers").iterdir() if p not in bad]
    return sorted(files)


def test_no_shipped_graph_file_gets_a_capture_rule_finding_it_was_not_made_for() -> None:
    """The false-positive sweep over graph files (the runs' sweep: test_capture_runs.py)."""
    checked, false_positives = 0, []
    for path in _graph_files():
        try:
            targets = [SimpleNamespace(graph=read_json(path), findings=[])] if path.suffix == ".json" \
                else load_targets(path)
        except Exception:  # not a graph (a pass file's JSON, a trace): not the sweep's
            continue
        for target in targets:
            if not isinstance(target.graph, Graph):
                continue
            checked += 1
            for mode in MODES:
                found = [*verify(target.graph, mode), *target.findings]
                false_positives += [(str(path.relative_to(REPO)), mode, f.rule) for f in found if f.rule in NEW]
    print(f"capture rules: {checked} graphs x {len(MODES)} modes, false positives: {len(false_positives)}")
    assert checked > 40 and false_positives == []



def _r18_run(tmp_path: Path, graph: Graph, stages: list, final: Graph | None = None, mode: str = "npugraph_ex") -> list:
    """R18's run-level findings over a hand-built run: ``graph`` at each of ``stages`` ((name, inserted)),
    then ``final`` (if given), the graph that runs."""
    from airctl.ledger.reader import Ledger
    from airctl.verify.run_checks import run_findings
    from fixtures.checks.capture.make_capture import write_ledger

    write_ledger(tmp_path / "run", graph, [], {}, stages, final, mode)
    ledger = Ledger.open(tmp_path / "run")
    return [f for _, f in run_findings(ledger.index, ledger.load) if f.rule == "wait_moved_by_compiler"]


def _kv(ok: bool = False) -> Graph:
    from fixtures.checks.capture.make_capture import kv_write_graph

    return kv_write_graph(ok)


def test_a_wait_a_later_pass_may_move_names_the_pass_and_says_it_did_not_move(tmp_path: Path) -> None:
    from fixtures.checks.capture.make_capture import KV_STAGES

    [f] = _r18_run(tmp_path, _kv(), KV_STAGES)
    assert f.nodes == ["wait_default", "copy_", "auto_functionalized_v2"] and f.ref == "R18"
    assert "reinplace_input_mutated_ops (run after the wait entered the graph) folds" in f.message
    assert "recover_view_inplace_pattern" not in f.message  # it folds the NPU scatter ops, not a custom op
    assert "in this run it did not move" in f.message and "airctl_fixture.write_cache" in f.message
    assert 'before: {source: "model.py:26"}' in f.hint


def test_a_wait_the_fold_moved_says_so(tmp_path: Path) -> None:
    """The graph that runs as reinplace_input_mutated_ops leaves it when it folds (on an NPU; hand-built
    here): the custom op writes the cache in place before the wait, and the copy_ is gone."""
    from fixtures.checks.capture.make_capture import KV_STAGES

    graph = _kv()
    kept = [n for n in graph.nodes if n.name not in ("getitem_1", "copy_")]
    folded = Graph(graph.name, "fx", [Node(n.name, n.op, list(n.inputs), attrs=dict(n.attrs), kind=n.kind,
                                           source=n.source) for n in kept])
    folded.node("auto_functionalized_v2").op = "airctl_fixture.write_cache.default"
    folded.node("auto_functionalized_v2").inputs = ["arg1_1", "arg2_1"]
    [f] = _r18_run(tmp_path, graph, KV_STAGES, final=folded)
    assert "in this run it moved: after:resolve_default_stream_markers" in f.message


@pytest.mark.parametrize("why", ["no folding pass after the wait", "wait inserted after the fold", "twin",
                                 "a plain op, which no pass folds", "the side stream does not touch the input"])
def test_a_wait_no_pass_can_move_is_not_reported(tmp_path: Path, why: str) -> None:
    from fixtures.checks.capture.make_capture import KV_STAGES

    graph, stages = _kv(), list(KV_STAGES)
    if why == "no folding pass after the wait":  # as a max-autotune run's stages: no reinplace_input_mutated_ops
        stages = [s for s in stages if s[0] != "after:reinplace_input_mutated_ops"]
    elif why == "wait inserted after the fold":
        stages = [s for s in stages if s[1] is None] + [("yaml:write-waits", ["wait_default"])]
    elif why == "twin":
        graph = _kv(ok=True)
    elif why == "a plain op, which no pass folds":
        graph.node("auto_functionalized_v2").op = "aten.add.Tensor"
    else:
        graph.node("mm").inputs = ["arg0_1", "arg0_1"]
    assert _r18_run(tmp_path, graph, stages) == []
