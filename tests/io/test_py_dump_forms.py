"""TorchAir's ``.py`` dumps in every statement form it writes (issue 32): multi-output list targets,
nested tuple targets, attribute calls, literal inputs; op counts equal the ``.txt`` dump's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.io.ge_text import parse_txt
from airctl.io.py_dump import parse_py_dump
from airctl.io.read import read_graph
from tests.io.dumps import DUMPS, PY_DUMPS

MULTI = DUMPS / "multi_output"


def consumed(txt: Graph) -> list[str]:
    """The txt dump's ops less the Consts no op consumes (a py dump never mentions those)."""
    used = {i.rsplit(":", 1)[0] for n in txt.nodes for i in [*n.inputs, *n.control_inputs] if i}
    return sorted(n.op for n in txt.nodes if n.op != "Const" or n.name in used)


@pytest.mark.parametrize("path", [*PY_DUMPS, MULTI / "original.py", MULTI / "optimized.py"],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_py_dump_has_the_txt_dumps_ops(path: Path) -> None:
    py = parse_py_dump(path.read_text(), str(path))
    txt = parse_txt(path.with_suffix(".txt").read_text(), str(path))
    assert sorted(n.op for n in py.nodes) == consumed(txt)


def test_multi_output_ops_keep_their_names_and_output_indices() -> None:
    py = parse_py_dump((MULTI / "original.py").read_text(), "original.py")
    txt = parse_txt((MULTI / "original.txt").read_text(), "original.txt")
    ops = {n.name: n for n in py.nodes if n.op != "Const"}
    truth = {n.name: n for n in txt.nodes if n.op != "Const"}
    assert set(ops) == set(truth)
    assert ops["NetOutput"].inputs == truth["NetOutput"].inputs  # LayerNormV4:1, SplitV:1, ArgMaxWithValue:1, ...
    assert ops["Mul"].inputs == ["SplitV:0", "SplitV:1"] and ops["Cast"].inputs == ["TopKV2:1"]
    assert len(ops["Pack"].inputs) == 2  # ge.Pack([4, -1], N=2): a dynamic input, one Const per element
    assert ops["LayerNormV4"].meta["fx_node"] == "native_layer_norm"


def test_nested_tuple_targets_and_attribute_calls() -> None:
    text = ("# -*- coding: utf-8 -*-\nfrom torchair._ge_concrete_graph import ge_apis as ge\n"
            'x_0 = ge.Data(index=0, dtype=0, shape=[2], node_name="x")\n'
            "Op_0, [Op_1, Op_2] = ge.custom.Op(x_0, [1, 2])\n"
            "_ = ge.NetOutput([Op_2, Op_0], dependencies=[])\n")
    g = parse_py_dump(text, "t.py")
    by_name = {n.name: n for n in g.nodes}
    assert by_name["Op"].op == "Op" and by_name["Op"].inputs == ["x:0", "Const:0"]
    assert by_name["NetOutput"].inputs == ["Op:2", "Op:0"]


def test_an_undefined_name_says_what_it_means() -> None:
    text = ("# -*- coding: utf-8 -*-\nfrom torchair._ge_concrete_graph import ge_apis as ge\n"
            'x_0 = ge.Add(y_0, y_0, node_name="x")\n')
    with pytest.raises(GraphReadError) as info:
        parse_py_dump(text, "t.py")
    assert "used before it is defined" in info.value.message and "cut short" in (info.value.hint or "")


def test_reduce_overhead_py_dumps_read_as_fx() -> None:
    folder = Path(__file__).resolve().parents[2] / "fixtures" / "imports" / "ro_tcd" / "graph_dump"
    for path in folder.glob("*.py"):
        g = read_graph(path)
        assert g.dialect == "fx" and g.nodes


def test_import_of_a_folder_whose_only_dump_cannot_be_read_fails(tmp_path: Path) -> None:
    from airctl.pipeline.importing import ImportRequest, import_artifacts

    folder = tmp_path / "from-npu"
    folder.mkdir()
    (folder / "dynamo_original_graph_1_rank_0_pid_1_ts_1.py").write_text(
        "# -*- coding: utf-8 -*-\nfrom torchair._ge_concrete_graph import ge_apis as ge\n"
        'x_0 = ge.Add(y_0, y_0, node_name="x")\n')
    with pytest.raises(GraphReadError) as info:
        import_artifacts(ImportRequest([folder], out_dir=tmp_path / "runs"))
    assert "no stage of graph" in info.value.message and "y_0" in info.value.message
    import json

    (ledger,) = (tmp_path / "runs").glob("*/index.json")
    assert json.loads(ledger.read_text())["status"] == "failed"


def test_import_of_multi_output_dumps_has_their_stages(tmp_path: Path) -> None:
    from airctl.pipeline.importing import ImportRequest, import_artifacts

    folder = tmp_path / "from-npu"
    folder.mkdir()
    for stage in ("original", "optimized"):
        shutil.copy(MULTI / f"{stage}.py", folder / f"dynamo_{stage}_graph_1_rank_0_pid_1_ts_{len(stage)}.py")
    result = import_artifacts(ImportRequest([folder], out_dir=tmp_path / "runs", report=False))
    assert result.index.status == "ok" and not result.problems
    assert [s.name for s in result.index.graphs[0].stages] == ["ge-original", "ge-optimized"]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_every_py_dump_torchair_writes_reads(tmp_path: Path, mode: str) -> None:
    """Acceptance 4: what TorchAir itself dumps for the multi-output model, in both modes."""
    from airctl.io.compressed import read_bytes
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    model = Path(__file__).resolve().parents[2] / "fixtures" / "models" / "multi_output.py"
    result = compile_model(CompileRequest.of(model, mode=mode, out_dir=tmp_path, backend="sim",
                                          dump_types=["py", "txt"] if mode == "max-autotune" else ["py"], report=False))
    assert result.error is None, result.error
    dumps = sorted((result.ledger_dir / "torchair").glob("dynamo_*.py*"))  # output_code: generated code
    assert dumps
    for path in dumps:
        text = read_bytes(path).decode()
        stem = str(path).removesuffix(".gz").removesuffix(".py")
        if mode == "max-autotune":
            py = parse_py_dump(text, str(path))
            txt = parse_txt(read_bytes(Path(stem + ".txt.gz")).decode(), stem)
            assert sorted(n.op for n in py.nodes) == consumed(txt)
        else:
            plain = tmp_path / Path(stem).name
            plain.with_suffix(".py").write_text(text)
            assert read_graph(plain.with_suffix(".py")).nodes
