"""read_graph's dispatch and its errors: always GraphReadError, with the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.errors import GraphReadError
from airctl.io.read import read_graph, write_graph
from tests.io.dumps import DUMPS


def _err(path: Path) -> GraphReadError:
    with pytest.raises(GraphReadError) as info:
        read_graph(path)
    return info.value


def test_content_decides_when_the_extension_does_not(tmp_path: Path) -> None:
    for src in ("stream/optimized.pbtxt", "stream/optimized.txt", "stream/optimized.py", "fx_after.json"):
        copy = tmp_path / (src.replace("/", "_") + ".dump")
        copy.write_bytes((DUMPS / src).read_bytes())
        assert read_graph(copy).nodes == read_graph(DUMPS / src).nodes


def test_truncated_pbtxt_names_file_and_last_line(tmp_path: Path) -> None:
    text = (DUMPS / "stream" / "optimized.pbtxt").read_text()
    cut = tmp_path / "cut.pbtxt"
    cut.write_text(text[: len(text) // 2])
    e = _err(cut)
    assert e.file == str(cut) and e.line == text[: len(text) // 2].count("\n") + 1
    assert "truncated" in e.message


def test_truncated_txt_has_a_line(tmp_path: Path) -> None:
    text = (DUMPS / "stream" / "optimized.txt").read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[:1000])
    e = _err(cut)
    assert e.file == str(cut) and isinstance(e.line, int) and e.line >= 1


def test_bad_attr_descriptor_points_at_its_line(tmp_path: Path) -> None:
    text = (DUMPS / "stream" / "optimized.pbtxt").read_text()
    bad = tmp_path / "bad.pbtxt"
    bad.write_text(text.replace("dtype: DT_FLOAT\\nshape", "dtype: DT_NOPE\\nshape", 1))
    e = _err(bad)
    line = next(i for i, t in enumerate(bad.read_text().split("\n"), 1) if "DT_NOPE" in t)
    assert e.line == line and "descriptor" in e.message


def test_binary_and_non_utf8_and_empty(tmp_path: Path) -> None:
    binary = tmp_path / "g.pbtxt"
    binary.write_bytes(b"node {\n  name: \"x\"\n\x00\x01\x02")
    assert _err(binary).line == 3
    latin = tmp_path / "g.txt"
    latin.write_bytes(b'name: "g"\nop { name: "\xe9" }\n')
    assert _err(latin).line == 2
    empty = tmp_path / "g.json"
    empty.write_text("  \n")
    assert _err(empty).line == 1


def test_json_errors(tmp_path: Path) -> None:
    bad = tmp_path / "g.json"
    bad.write_text('{"nodes": [\n{"name": "a", "op": "x"},\n')
    assert _err(bad).line == 3
    bad.write_text('{"nodes": 5}')
    assert "airctl graph JSON" in _err(bad).message
    bad.write_text('{"nodes": [{"name": "a", "op": "x", "inputs": [1]}]}')
    assert "wrong type" in _err(bad).message
    bad.write_text('{"nodes": [{"name": "a", "op": "x"}, {"name": "a", "op": "y"}]}')
    assert "duplicate" in _err(bad).message


def test_py_model_script_is_not_a_dump(tmp_path: Path) -> None:
    script = tmp_path / "model.py"
    script.write_text("import torch\nmodel = torch.nn.Linear(2, 2)\n")
    assert "not a TorchAir graph dump" in _err(script).message


def test_duplicate_names_in_dumps(tmp_path: Path) -> None:
    dup = tmp_path / "d.pbtxt"
    dup.write_text('node {\n    name: "a"\n    op: "X"\n}\nnode {\n    name: "a"\n    op: "Y"\n}\n')
    e = _err(dup)
    assert e.line == 5 and e.node == "a"


def test_unknown_write_type() -> None:
    from airctl.errors import AirctlError

    with pytest.raises(AirctlError):
        write_graph(read_graph(DUMPS / "fx_after.json"), "out.xml")


def test_input_naming_no_node_is_an_error_with_its_line(tmp_path: Path) -> None:
    text = (DUMPS / "stream" / "optimized.pbtxt").read_text()
    assert 'input: "MatMul:0"' in text
    bad = tmp_path / "dangling.pbtxt"
    bad.write_text(text.replace('input: "MatMul:0"', 'input: "Ghost:0"', 1))
    with pytest.raises(GraphReadError) as e:
        read_graph(bad)
    assert e.value.node is not None and "Ghost" in e.value.message
    assert e.value.line == text[: text.index('input: "MatMul:0"')].count("\n") + 1


@pytest.mark.parametrize("ge", [True, False])
def test_a_reader_that_keeps_its_reference_table_rejects_what_the_plain_check_rejects(tmp_path: Path,
                                                                                      ge: bool) -> None:
    """``keep_refs`` resolves the references through :class:`Refs` instead of one by one: the same
    graphs pass (an absent optional input ``""``, a name that is itself a reference) and fail, with
    the same error."""
    from airctl.graph.model import Graph, Node
    from airctl.io.json_io import write_json

    dialect, out = ("ge", "x:1") if ge else ("fx", "x")
    good = [Node("x", "Data"), Node("a:1", "Data"), Node("y", "Add", inputs=[out, "a:1", ""], control_inputs=["^x"])]
    cases = {"good": good, "ghost": [*good, Node("z", "Mul", inputs=[out, "ghost:0"])],
             "ghost-control": [*good, Node("z", "Mul", control_inputs=["^ghost"])],
             "duplicate": [*good, Node("x", "Data")]}
    for label, nodes in cases.items():
        path = tmp_path / f"{label}.json"
        path.write_text(write_json(Graph("g", dialect, nodes)))
        outcomes = []
        for keep in (False, True):
            try:
                outcomes.append(("ok", read_graph(path, keep_refs=keep).nodes))
            except GraphReadError as e:
                outcomes.append(("error", e.message, e.node))
        assert outcomes[0] == outcomes[1], label
        assert outcomes[0][0] == ("ok" if label == "good" else "error"), label


def test_graph_json_is_checked_strictly_and_written_as_standard_json(tmp_path: Path) -> None:
    import json as _json

    from airctl.graph.model import Graph, Node
    from airctl.io.json_io import write_json

    cases = {
        '{"format": "something-else", "nodes": []}': "format 'something-else'",
        '{"format": "airctl-graph", "version": 99, "nodes": []}': "version 99",
        '{"nodes": [{"name": "a", "op": null}]}': "'op' must be a non-empty string, not None",
        '{"nodes": [{"name": "a", "op": "X", "stream": 3}]}': "'stream' has the wrong type",
        '{"nodes": [{"name": "a", "op": "X", "inputs": [1]}]}': "'inputs' has the wrong type",
    }
    for text, message in cases.items():
        bad = tmp_path / "g.json"
        bad.write_text(text)
        assert message in _err(bad).message, text
    g = Graph("g", "fx", [Node("c", "Const", attrs={"value": float("nan"), "hi": [float("inf"), 1.5]})])
    text = write_json(g)
    assert "NaN" not in text.replace('"NaN"', "")  # never the non-standard bare NaN token
    node = _json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))["nodes"][0]
    assert node["attrs"] == {"value": "NaN", "hi": ["Infinity", 1.5]}
