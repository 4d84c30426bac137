"""report.html: payload from a ledger (stages, diffs, stable layout), findings, profile, page safety."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.report import write_report
from airctl.report.page import JSON_TYPE, payload_of, script_payload
from tests.report.ledgers import make_ledger


def payload(page: Path) -> dict:
    return payload_of(page.read_text())


def test_report_lists_every_stage_with_diffs(tmp_path: Path) -> None:
    root = make_ledger(tmp_path)
    out = write_report(root)
    assert out == root / "report.html"
    data = payload(out)
    (graph,) = data["graphs"]
    names = [s["name"] for s in graph["stages"]]
    assert names == ["aot-inference", "yaml:mm-abs-on-stream1", "after:optimize_noop_ops", "fx-final",
                     "ge-original", "ge-optimized"]
    stages = {s["name"]: s for s in graph["stages"]}
    assert stages["aot-inference"]["diff"] is None  # first stage
    d = stages["yaml:mm-abs-on-stream1"]["diff"]
    assert d["summary"]["added"] == 4 and d["summary"]["changed"] == 2
    group = data["groups"][stages["yaml:mm-abs-on-stream1"]["group"]]
    assert sorted(group["keys"][u] for u in d["added"]) == ["record_default", "scope_enter_default",
                                                            "scope_exit_default", "wait_default"]
    assert ["record_default", "wait_default", "sync"] in [[group["keys"][s], group["keys"][t], k]
                                                          for s, t, k in d["edges_added"]]
    # an unchanged pass shares the snapshot and has an empty diff
    assert stages["after:optimize_noop_ops"]["snap"] == stages["yaml:mm-abs-on-stream1"]["snap"]
    assert stages["after:optimize_noop_ops"]["diff"]["summary"]["added"] == 0
    # FX and GE stages are laid out separately; the first GE stage has no diff
    assert stages["ge-original"]["group"] != stages["fx-final"]["group"]
    assert stages["ge-original"]["diff"] is None
    ge = stages["ge-optimized"]["diff"]
    ge_group = data["groups"][stages["ge-optimized"]["group"]]
    assert sorted(ge_group["keys"][u] for u, _ in ge["changed"]) == ["Abs", "MatMul"]
    assert data["findings"][0]["rule"] == "wait_dropped_at_tail"


def test_layout_is_one_per_group_over_the_union(tmp_path: Path) -> None:
    data = payload(write_report(make_ledger(tmp_path)))
    fx = data["groups"][0]
    assert fx["dialect"] == "fx"
    n = len(fx["keys"])
    assert len(fx["x"]) == len(fx["y"]) == n == len(set(fx["keys"]))
    snaps = fx["snapshots"]
    assert {fx["keys"][u] for u in snaps[0]["nodes"]} < {fx["keys"][u] for u in snaps[1]["nodes"]}
    assert len({(x, y) for x, y in zip(fx["x"], fx["y"], strict=True)}) == n  # no two nodes on one spot


def test_renamed_nodes_keep_their_place(tmp_path: Path) -> None:
    from airctl.graph.model import Graph, Node
    from airctl.ledger.writer import LedgerWriter

    w = LedgerWriter.create(tmp_path, "ren")
    w.graph("g", "inference")
    a = Graph("g", "ge", [Node("x", "Data"), Node("Add_1", "Add", inputs=["x:0", "x:0"]),
                          Node("out", "NetOutput", inputs=["Add_1:0"])])
    b = Graph("g", "ge", [Node("x", "Data"), Node("Add_2", "Add", inputs=["x:0", "x:0"]),
                          Node("out", "NetOutput", inputs=["Add_2:0"])])
    w.add_stage("g", "one", a)
    w.add_stage("g", "two", b, changed=True)
    w.finish()
    data = payload(write_report(w.root))
    group = data["groups"][0]
    assert group["keys"] == ["x", "Add_1", "out"]  # Add_2 took Add_1's place
    snap = group["snapshots"][1]
    assert snap["names"] == {"1": "Add_2"}  # from the page: JSON keys are strings
    assert data["graphs"][0]["stages"][1]["diff"]["summary"]["added"] == 0


def test_profile_section_and_timeline_as_image(tmp_path: Path) -> None:
    root = make_ledger(tmp_path, profile=True)
    text = write_report(root).read_text()
    data = payload(root / "report.html")
    assert data["profile"]["overlap_s"] == 0.25
    assert 'src="data:image/svg+xml;base64,' in text
    assert 'data-pwned' not in text  # the timeline's own script is inside base64, shown as an image


def test_missing_snapshot_and_failed_run(tmp_path: Path) -> None:
    root = make_ledger(tmp_path, findings=False)
    index = json.loads((root / "index.json").read_text())
    (root / index["graphs"][0]["stages"][-1]["file"]).unlink()
    index["status"] = "failed"
    index["error"] = "boom"
    (root / "index.json").write_text(json.dumps(index))
    data = payload(write_report(root))
    assert data["graphs"][0]["stages"][-1]["missing"] is True
    assert data["run"]["error"] == "boom"


def test_no_index_means_no_report(tmp_path: Path) -> None:
    assert write_report(tmp_path) is None


def test_the_payload_json_cannot_close_the_script_block() -> None:
    kind, text = script_payload({"name": "</script><!--<script>&"})
    assert kind == JSON_TYPE and "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"name": "</script><!--<script>&"}


@pytest.mark.slow
def test_compile_writes_report(compile_fixture, tmp_path: Path) -> None:
    import shutil

    result = compile_fixture("seed")
    root = Path(result.ledger_dir)
    index = json.loads((root / "index.json").read_text())
    assert index.get("report") == "report.html", index.get("report_error")
    data = payload(root / "report.html")
    assert data["graphs"] and data["groups"]
    # the graphs were laid out while TorchAir's pbtxt was being written: the same as made at the end
    # from the snapshots on disk
    again = shutil.copytree(root, tmp_path / "again")
    fresh = payload(write_report(again))
    assert (data["graphs"], data["groups"]) == (fresh["graphs"], fresh["groups"])


def test_a_draft_is_used_while_the_index_lists_the_stages_it_was_made_from(tmp_path: Path) -> None:
    from airctl.ledger.reader import Ledger
    from airctl.report import ReportDraft, draft_report

    root = make_ledger(tmp_path)
    draft = draft_report(root, Ledger.open(root).index)
    assert payload(write_report(root, draft=draft))["graphs"] == payload(write_report(root))["graphs"]
    marked = ReportDraft(draft.key, {"graphs": [], "groups": []})  # what the draft holds is what is shown
    assert payload(write_report(root, draft=marked))["graphs"] == []
    stale = ReportDraft("a stage list that changed since", {"graphs": [], "groups": []})
    assert len(payload(write_report(root, draft=stale))["graphs"]) == 1  # made afresh


def test_huge_attributes_are_clipped_in_the_page() -> None:
    from airctl.graph.model import Graph, Node
    from airctl.report.node_data import MAX_TEXT
    from airctl.report.payload import Group

    g = Graph("g", "ge", [Node("c", "Const", attrs={"value": {"hex": "ab" * 100_000}, "dims": list(range(1000))})])
    group = Group("g", "ge")
    group.add(g)
    attrs = group.details[0]["attrs"]
    assert len(attrs["value"]["hex"]) < MAX_TEXT + 40 and attrs["value"]["hex"].endswith("(200000 characters)")
    assert len(attrs["dims"]) == 201


def test_removed_and_added_namesakes_get_separate_places() -> None:
    from airctl.graph.model import Graph, Node
    from airctl.report.payload import Group

    # placeholders as FX has them (kind too): the k-th argument pairs with the k-th, so v reads another input
    x, y = Node("x", "placeholder", kind="placeholder"), Node("y", "placeholder", kind="placeholder")
    a = Graph("g", "fx", [x, y, Node("v", "aten.view", inputs=["x"]), Node("out", "output", inputs=["v"])])
    b = Graph("g", "fx", [x, y, Node("v", "aten.reshape", inputs=["y"]), Node("out", "output", inputs=["v"])])
    group = Group("g", "fx")
    group.add(a)
    _, diff = group.add(b)
    assert diff is not None
    assert [group.keys[u] for u in diff["removed"]] == ["v"]
    assert [group.keys[u] for u in diff["added"]] == ["v#2"]
    assert group.snapshots[1]["names"] == {2: "v"}


def test_viewer_files_are_inlined_in_their_fixed_order_in_one_script() -> None:
    from airctl.graph.model import Graph, Node
    from airctl.report.page import HERE, VIEWER_JS, graph_page, viewer_js

    on_disk = {p.name for p in (HERE / "viewer").glob("*.js")}
    assert on_disk == set(VIEWER_JS)  # a new file must be listed, or the page would lack it
    assert VIEWER_JS[0] == "state.js" and VIEWER_JS[-1] == "start.js"  # shared vars first, start() last
    js = viewer_js()
    marks = [js.index(f"/* ---- viewer/{name} ---- */") for name in VIEWER_JS]
    assert marks == sorted(marks)
    assert js.startswith("(function (viewer) {") and js.rstrip().endswith("});")  # the loader calls the viewer
    assert js.rstrip().removesuffix("});").rstrip().endswith("start();")
    page = graph_page(Graph("g", "fx", [Node("x", "placeholder", kind="placeholder")]))
    assert page.count("<script") == 2 and js in page  # the payload block and the viewer


def test_each_snapshot_carries_its_order_edges_and_lane_view(tmp_path: Path) -> None:
    from tests.report.test_lanes_browser import racy_ledger

    data = payload(write_report(make_ledger(tmp_path / "a")))
    stages = {s["name"]: s for s in data["graphs"][0]["stages"]}
    st = stages["fx-final"]
    group = data["groups"][st["group"]]
    snap = group["snapshots"][st["snap"]]
    names = [group["keys"][u] for u in snap["nodes"]]

    def named(flat: list[int], union: bool) -> set[tuple[str, str]]:
        key = (lambda u: group["keys"][u]) if union else (lambda i: names[i])
        return {(key(flat[k]), key(flat[k + 1])) for k in range(0, len(flat), 2)}

    assert {("scope_enter_default", "mm"), ("wait_default", "sub")} <= named(snap["edges"]["order"], True)
    lanes = snap["lanes"]
    assert [group["streams"][s] for s in lanes["streams"]] == [None, "stream_1"]
    assert named(lanes["arrows"], False) == {("record_default", "wait_default")}
    assert lanes["marks"] == [] and "runs" not in lanes  # a small graph is not folded
    # the stream column of the layout: stream_1's nodes right of the default stream's
    x = dict(zip(group["keys"], group["x"], strict=True))
    assert min(x[n] for n in ("mm", "abs_1", "record_default")) > max(x[n] for n in ("add", "wait_default", "sub"))
    # the lanes of a reduce-overhead run carry the verifier's findings of that snapshot
    data = payload(write_report(racy_ledger(tmp_path / "b")))
    group = data["groups"][0]
    snap = group["snapshots"][-1]
    names = [group["keys"][u] for u in snap["nodes"]]
    marks = {(names[m[0]], m[2], m[4]) for m in snap["lanes"]["marks"]}
    race = "race_cross_stream_without_wait"
    assert ("add", race, 1) in marks and ("mm", race, 0) in marks  # on the reader; the value read is involved


def test_the_payload_reads_the_same_whichever_encoder_wrote_its_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson writes the groups (report/page.py) when installed; json, the rest and the fallback."""
    import json

    from airctl.report import page

    groups = [{"keys": ["a", "<\u00b7>"], "details": [{"attrs": {"n": "NaN", 3: None}}]}]
    assert page._orjson_text(groups) is not None  # orjson is a dependency: the fast path is taken
    assert page._orjson_text([{"big": 2**70}]) is None  # over 64 bits: json's turn
    payloads = [{"title": "t \u00d7 \u2028", "run": {"timings": {"x": float("nan")}}, "groups": g, "why": {}}
                for g in (groups, [*groups, {"big": 2**70}])]
    fast = [page.payload_json(p) for p in payloads]
    monkeypatch.setattr(page, "_orjson_text", lambda value: None)
    slow = [page.payload_json(p) for p in payloads]
    assert [json.loads(t) for t in fast] == [json.loads(t) for t in slow]
    assert json.loads(fast[0])["run"]["timings"]["x"] == "NaN"  # outside the groups: still spelt, never null
    assert page.payload_json({"groups": [{"n": 1}]}) == '{"groups":[{"n":1}]}'


def test_ops_and_streams_are_numbered_in_order_of_first_appearance() -> None:
    from airctl.report.node_data import numbered

    table: dict[str | None, int] = {"a": 0}
    assert numbered(["b", "a", None, "b"], table) == [1, 0, 2, 1] and table == {"a": 0, "b": 1, None: 2}


def test_a_first_snapshots_places_are_its_names() -> None:
    """The first snapshot's places are its names; namesakes (an unchecked graph) share one, as later
    snapshots' do."""
    from airctl.graph.model import Graph, Node
    from airctl.report.payload import Group

    group = Group("g", "ge")
    group.add(Graph("g", "ge", [Node("x", "Data"), Node("x", "Data"), Node("y", "Add", inputs=["x:0"])]))
    assert group.keys == ["x", "y"] and group.snapshots[0]["nodes"] == [0, 0, 1]
    plain = Group("g", "ge")
    plain.add(Graph("g", "ge", [Node("x", "Data"), Node("y", "Add", inputs=["x:0"])]))
    assert plain.keys == ["x", "y"] and plain.key_index == {"x": 0, "y": 1} and plain.details == [[], ["x:0"]]
