"""Acceptance: folders TorchAir wrote (fixtures/imports, made by the torch-npu wheel under sim with
`airctl run` on fixtures/imports/streams.py and train_break.py) import into the ledger `airctl compile`
makes of the same model and pass (`--passes fixtures/imports/streams.yaml`): same graphs, stages,
nodes, streams and control/sync edges — except what the files cannot hold (docs/import.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from airctl.graph.model import Graph
from airctl.ledger.reader import Ledger
from airctl.modes import Mode
from airctl.pipeline.importing import ImportRequest, import_artifacts

MAX_AUTOTUNE, REDUCE_OVERHEAD = Mode.MAX_AUTOTUNE.value, Mode.REDUCE_OVERHEAD.value
IMPORTS = Path(__file__).resolve().parents[2] / "fixtures" / "imports"
STREAMS, TRAIN = "streams.py", "train_break.py"
FOLDERS = {"ma_tcd": (STREAMS, MAX_AUTOTUNE), "ma_txt": (STREAMS, MAX_AUTOTUNE), "ma_py": (STREAMS, MAX_AUTOTUNE),
           "ro_tcd": (STREAMS, REDUCE_OVERHEAD), "train_tcd": (TRAIN, MAX_AUTOTUNE)}
COMPILE_DEBUG = ("ma_tcd", "ro_tcd")  # complete TORCH_COMPILE_DEBUG folders: every stage

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Ledger]:
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    out = tmp_path_factory.mktemp("compile")
    ledgers = {}
    for script, mode in sorted(set(FOLDERS.values())):
        passes = str(IMPORTS / "streams.yaml") if script == STREAMS else None
        result = compile_model(CompileRequest.of(model_path=IMPORTS / script, mode=mode, out_dir=out,
                                              passes_file=passes, report=False))
        assert result.error is None, result.error
        ledgers[(script, mode)] = Ledger.open(result.ledger_dir)
    return ledgers


def _normal(graph: Graph) -> list[tuple[Any, ...]]:
    """``structure()``, with what differs by nothing but where the text came from:
    - print_readable lists placeholders as forward()'s parameters, before every node (TorchAir inserts
      its first tagged-event record before them in the FX graph);
    - TorchAir names tagged events after its per-process graph counter (graph_1_arg0_1 in the user's
      process, graph_N here, where the test process compiled other graphs first)."""
    rows = [(n.name, n.op, n.kind, n.inputs, n.control_inputs,
             re.sub(r"graph_\d+_", "graph_N_", str(n.attrs)), n.stream) for n in graph.nodes]
    return [r for r in rows if r[2] == "placeholder"] + [r for r in rows if r[2] != "placeholder"]


def _edges(graph: Graph) -> set[tuple[str, str, str]]:
    return {(e.src, e.dst, e.kind) for e in graph.edges() if e.kind in ("control", "sync")}


@pytest.mark.parametrize("folder", list(FOLDERS))
def test_import_equals_compile(folder: str, compiled: dict[tuple[str, str], Ledger], tmp_path: Path) -> None:
    script, mode = FOLDERS[folder]
    ours = compiled[(script, mode)]
    result = import_artifacts(ImportRequest([IMPORTS / folder], out_dir=tmp_path, report=False))
    imported = Ledger.open(result.ledger_dir)
    assert result.problems == []
    assert imported.index.mode == mode
    counter = re.compile(r"graph_\d+")  # TorchAir's per-process graph counter (see _normal)
    assert [(g.id, g.kind, counter.sub("graph_N", g.name)) for g in imported.index.graphs] == [
        (g.id, g.kind, counter.sub("graph_N", g.name)) for g in ours.index.graphs]
    for gid in ours.graph_ids():
        theirs_names = [s.name for s in ours.stages(gid) if not s.name.startswith("yaml:")]
        names = [s.name for s in imported.stages(gid)]
        if folder in COMPILE_DEBUG:
            assert names == theirs_names
        else:  # a log and dumps (or a trimmed folder): fewer stages; what is there is in order
            assert names == [n for n in theirs_names if n in names]
            assert {n for n in theirs_names if n.startswith("aot-")} | {"fx-final", "ge-original"} <= set(names)
        for stage in imported.stages(gid):
            mine, theirs = imported.load(stage), ours.load(ours.find_stage(stage.name, gid))
            if folder == "ma_py" and stage.dialect == "ge":  # the py dump: ops and data edges only
                assert [(n.name, n.op, n.inputs) for n in mine.nodes] == [(n.name, n.op, n.inputs)
                                                                        for n in theirs.nodes]
                assert _edges(mine) == set() and _edges(theirs)
                continue
            assert _normal(mine) == _normal(theirs), f"{folder} {gid} {stage.name}"
            assert {n.name: n.stream for n in mine.nodes} == {n.name: n.stream for n in theirs.nodes}
            assert _edges(mine) == _edges(theirs), f"{folder} {gid} {stage.name}"
            if stage.entry.changed is not None and ours.find_stage(stage.name, gid).entry.changed is not None:
                assert stage.entry.changed == ours.find_stage(stage.name, gid).entry.changed, stage.name
    if script == TRAIN:  # a graph break: two forward graphs, their backward graphs compiled in reverse
        assert imported.graph_ids() == ["1-forward", "2-forward", "2-backward", "1-backward"]
        return
    final = imported.load(imported.find_stage("fx-final"))
    assert {n.stream for n in final.nodes} == {None, "stream_1"}
    assert _edges(final) == {("record_default", "wait_default", "sync")}
    if mode == MAX_AUTOTUNE and folder != "ma_py":
        assert _edges(imported.load(imported.find_stage("ge-optimized"))) == {("Abs", "Sub", "control")}
