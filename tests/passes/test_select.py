"""Selectors over live FX graphs: target, name, source, module, index, groups, and explained misses."""

from __future__ import annotations

import pytest

from airctl.passes.select import groups, near_misses, node_infos, select
from airctl.passes.spec import Selector
from tests.passes.conftest import layered_gm, seed_gm


def names(found) -> list[str]:
    return [i.name for i in found]


@pytest.fixture(scope="module")
def layered(torch_air):
    return node_infos(layered_gm(torch_air).graph)


def test_target_overload_packet_and_list(torch_air) -> None:
    infos = node_infos(seed_gm(torch_air).graph)
    assert names(select(Selector(target=["aten.mm.default"]), infos)) == ["mm"]
    assert names(select(Selector(target=["aten.sub"]), infos)) == ["sub"]  # every overload of aten.sub
    assert names(select(Selector(target=["aten.abs.default", "aten.add.Tensor"]), infos)) == ["abs_1", "add"]
    assert select(Selector(target=["aten.mm.out"]), infos) == []


def test_placeholders_only_when_named_and_never_the_output(torch_air) -> None:
    infos = node_infos(seed_gm(torch_air).graph)
    assert "x_1" not in names(select(Selector(name=".*"), infos))
    assert "output" not in names(select(Selector(name=".*"), infos))
    assert names(select(Selector(target=["placeholder"]), infos)) == ["x_1"]


def test_name_is_a_full_match_regex(layered) -> None:
    assert names(select(Selector(name="mm"), layered)) == ["mm"]
    assert names(select(Selector(name="mm_?\\d*"), layered)) == ["mm", "mm_1", "mm_2", "mm_3"]


def test_source_matches_any_frame_by_path_suffix_and_line_range(layered) -> None:
    assert names(select(Selector(source="model.py:11"), layered)) == ["relu", "relu_1"]
    assert len(select(Selector(source="src/model.py:10-11"), layered)) == 4
    assert len(select(Selector(source="model.py:40"), layered)) == 6  # an outer frame
    assert select(Selector(source="other.py:10"), layered) == []


def test_module_prefix_glob_and_exact(layered) -> None:
    assert names(select(Selector(module="layers.0.mlp"), layered)) == ["mm", "relu", "mm_1"]
    assert names(select(Selector(module="layers.*.mlp$"), layered)) == ["relu", "relu_1"]
    assert len(select(Selector(module="layers.*"), layered)) == 8


def test_index_and_negative_index(layered) -> None:
    assert names(select(Selector(target=["aten.mm.default"], index=0), layered)) == ["mm"]
    assert names(select(Selector(target=["aten.mm.default"], index=-1), layered)) == ["mm_3"]
    assert select(Selector(target=["aten.mm.default"], index=9), layered) == []


def test_groups_by_matched_module_or_a_glob(layered) -> None:
    sel = Selector(module="layers.*.mlp")
    found = select(sel, layered)
    assert [names(g) for g in groups(found, sel, True)] == [["mm", "relu", "mm_1"], ["mm_2", "relu_1", "mm_3"]]
    assert len(groups(found, sel, False)) == 1
    mm = Selector(target=["aten.mm.default"])
    assert [names(g) for g in groups(select(mm, layered), mm, "layers.*")] == [["mm", "mm_1"], ["mm_2", "mm_3"]]
    assert [names(g) for g in groups(select(mm, layered), mm, True)] == [["mm"], ["mm_1"], ["mm_2"], ["mm_3"]]


def test_miss_lists_similar_ops(torch_air) -> None:
    infos = node_infos(seed_gm(torch_air).graph)
    miss = near_misses(Selector(target=["aten.matmul.default"]), infos)
    assert "matched no node" in miss.message()
    assert miss.candidates[0]["value"] == "aten.mm.default"
    assert "aten.mm.default" in miss.hint()


def test_miss_suggests_reshape_for_view(layered, torch_air) -> None:
    import torch.fx as fx

    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(torch_air.ops.aten.reshape.default, (x, [9])))
    miss = near_misses(Selector(target=["aten.view.default"]), node_infos(g))
    assert miss.candidates[0]["value"] == "aten.reshape.default"


def test_miss_names_what_each_field_matched(layered) -> None:
    miss = near_misses(Selector(target=["aten.relu.default"], module="layers.5"), layered)
    assert miss.field_counts == {"target": 2, "module": 0}
    assert "target alone matches 2" in miss.message()
    assert any(c["field"] == "module" for c in miss.candidates)


def test_miss_on_source_lists_lines_of_that_file(layered) -> None:
    miss = near_misses(Selector(source="model.py:13"), layered)
    assert [c["value"] for c in miss.candidates][:2] == ["model.py:11", "model.py:12"] or \
        "model.py:12" in [c["value"] for c in miss.candidates]


def test_miss_with_index_out_of_range(layered) -> None:
    miss = near_misses(Selector(target=["aten.relu.default"], index=5), layered)
    assert "index 5 but only 2 node(s) match" in miss.message()
