"""airctl/passes/fix.py: races of a plan graph become the record/wait passes a person would write,
checked with the pass runner's own selector matching (fast: graph-model graphs, no compile)."""

from __future__ import annotations

from airctl.graph.model import Graph, Node
from airctl.passes.fix import _layered, plan_fix, short_source, wait_hint
from airctl.verify.verifier import verify

SRC = "/venv/lib/python3.11/site-packages/transformers/models/qwen3/modeling_qwen3.py"


def _layers(n: int = 2, with_record: bool = True) -> Graph:
    """Per layer: a norm on the main stream, the MLP (one mm) in a scope on stream `mlp` that records,
    and the residual add on the main stream reading the MLP's output."""
    nodes = [Node("x", "placeholder", kind="placeholder")]
    prev = "x"
    for k in range(n):
        nodes += [
            Node(f"norm_{k}", "aten.mul.Tensor", [prev], attrs={"args": [f"%{prev}", 2]}, source=f"{SRC}:300",
                 module=f"model.layers.{k}.post_attention_layernorm", kind="call_function"),
            Node(f"enter_{k}", "air.scope_enter.default", attrs={"args": [["_user_stream_label"], ["mlp"]]},
                 kind="call_function", meta={"pass": "mlp-scope"}),
            Node(f"mm_{k}", "aten.mm.default", [f"norm_{k}"], attrs={"args": [f"%norm_{k}", f"%norm_{k}"]},
                 stream="mlp", source=f"{SRC}:82", module=f"model.layers.{k}.mlp", kind="call_function"),
        ]
        if with_record:
            nodes.append(Node(f"record_{k}", "air.record.default", attrs={"args": []}, stream="mlp",
                              kind="call_function", meta={"pass": "mlp-scope"}))
        nodes += [
            Node(f"exit_{k}", "air.scope_exit.default", attrs={"args": []}, stream="mlp", kind="call_function",
                 meta={"pass": "mlp-scope"}),
            Node(f"add_{k}", "aten.add.Tensor", [prev, f"mm_{k}"], attrs={"args": [f"%{prev}", f"%mm_{k}"]},
                 source=f"{SRC}:316", module=f"model.layers.{k}", kind="call_function"),
        ]
        prev = f"add_{k}"
    nodes.append(Node("output", "output", [prev], attrs={"args": [[f"%{prev}"]]}, kind="output"))
    return Graph("g", "fx", nodes)


def _races(graph: Graph) -> list[tuple[str, str, str, str]]:
    """The residual adds' races (the MLP's read of the norm races too: the graph has no wait for it)."""
    return [("g", f.nodes[0], f.nodes[1], f.mode) for f in verify(graph, "reduce-overhead")
            if f.rule == "race_cross_stream_without_wait" and f.nodes[1].startswith("add")]


def test_a_library_line_is_written_relative_to_its_package_root() -> None:
    assert short_source(f"{SRC}:316") == "transformers/models/qwen3/modeling_qwen3.py:316"
    assert short_source("/home/me/work/model.py:12") == "model.py:12"


def test_layer_numbers_become_a_glob_and_the_each_over_layers() -> None:
    assert _layered("model.layers.3.mlp") == ("model.layers.*.mlp", "model.layers.*")


def test_a_race_per_layer_becomes_one_wait_on_the_scopes_own_record_by_source_line() -> None:
    graph = _layers()
    races = _races(graph)
    assert [(r[1], r[2]) for r in races] == [("mm_0", "add_0"), ("mm_1", "add_1")]
    plan = plan_fix({"g": graph}, races, names={"mlp-scope"}, stage="pre")
    assert plan.unclosed == []
    [wait] = plan.passes
    assert wait.kind == "wait" and wait.fields == {
        "before": {"source": "transformers/models/qwen3/modeling_qwen3.py:316", "target": "aten.add.Tensor"},
        "each": "model.layers.*", "on": "mlp-scope"}
    assert wait.closes == ["g: add_0 reads mm_0", "g: add_1 reads mm_1"]
    text = plan.yaml("  ", "pre")
    assert '    before: {source: "transformers/models/qwen3/modeling_qwen3.py:316", target: aten.add.Tensor}' in text


def test_without_a_record_after_the_producer_the_fix_adds_one() -> None:
    graph = _layers(with_record=False)
    plan = plan_fix({"g": graph}, _races(graph), names=set(), stage="pre")
    record, wait = plan.passes
    assert record.kind == "record" and record.fields["after"]["target"] == "aten.mm.default"
    assert wait.fields["on"] == record.name


def test_the_hint_names_the_consumer_and_offers_the_yaml() -> None:
    hint = wait_hint(_layers(), "mm_1", "add_1")
    assert hint.startswith("the wait goes before add_1 (transformers/models/qwen3/modeling_qwen3.py:316)")
    assert "airctl passes fix" in hint and "  - name: add-waits-for-mlp-scope" in hint
    assert "site-packages" not in hint

