"""Mode: the spellings files use, the table of what each mode means, and the error for a name that is none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.errors import AirctlError, ExitCode
from airctl.modes import MEANINGS, Mode, UnknownMode


@pytest.mark.parametrize(("text", "mode"), [
    ("max-autotune", Mode.MAX_AUTOTUNE), ("max_autotune", Mode.MAX_AUTOTUNE), (" Max-Autotune\n", Mode.MAX_AUTOTUNE),
    ("ge", Mode.MAX_AUTOTUNE), ("GE", Mode.MAX_AUTOTUNE),
    ("reduce-overhead", Mode.REDUCE_OVERHEAD), ("reduce_overhead", Mode.REDUCE_OVERHEAD),
    ("aclgraph", Mode.REDUCE_OVERHEAD),
    ("npugraph_ex", Mode.NPUGRAPH_EX), ("npugraph-ex", Mode.NPUGRAPH_EX), ("NPUGRAPH_EX", Mode.NPUGRAPH_EX),
    (Mode.NPUGRAPH_EX, Mode.NPUGRAPH_EX),
])
def test_parse_takes_the_spellings_files_use(text: str, mode: Mode) -> None:
    assert Mode.parse(text) is mode
    assert Mode.lookup(text) is mode


@pytest.mark.parametrize("text", ["", "npu", "max autotune", "reduce-overheads", "npugraph"])
def test_parse_refuses_a_name_that_is_no_mode(text: str) -> None:
    with pytest.raises(UnknownMode) as e:
        Mode.parse(text)
    assert isinstance(e.value, AirctlError) and isinstance(e.value, ValueError)
    assert e.value.exit_code is ExitCode.USAGE
    assert repr(text) in e.value.message and "max-autotune, reduce-overhead or npugraph_ex" in e.value.message
    assert e.value.hint
    assert Mode.lookup(text) is None


def test_the_table_has_one_row_per_mode() -> None:
    assert set(MEANINGS) == set(Mode)


def test_semantics_npugraph_ex_runs_aclgraphs_with_its_own_namespace() -> None:
    assert [m.semantics for m in Mode] == [Mode.MAX_AUTOTUNE, Mode.REDUCE_OVERHEAD, Mode.REDUCE_OVERHEAD]
    assert [m.is_ge for m in Mode] == [True, False, False]
    assert [m.is_aclgraph for m in Mode] == [False, True, True]
    assert [m.is_npugraph_ex for m in Mode] == [False, False, True]
    assert [m.stream_namespace for m in Mode] == ["air", "air", "npugraph_ex"]
    assert [m.meaning.reader for m in Mode] == ["TorchAir", "TorchAir", "npugraph_ex"]


def test_what_the_device_does_per_mode() -> None:
    ge, acl, ex = (m.meaning for m in Mode)
    assert (ge.replays, acl.replays, ex.replays) == ("ge", "fx", "fx")  # GE runs its own graph; aclgraph the FX one
    assert ge.syncs_data_edges and not acl.syncs_data_edges and not ex.syncs_data_edges
    assert ge.launch_us > acl.launch_us == ex.launch_us  # a RunGraph costs more host time than a replay
    assert (ge.memory_rule, acl.memory_rule) == ("GE static plan", "aclgraph capture pool")
    assert [m.dumps for m in Mode] == [("pbtxt", "txt", "py"), ("py",), ()]
    assert ge.static_kernel_option is None and acl.static_kernel_option and ex.static_kernel_option


def test_a_mode_reads_and_writes_as_its_value() -> None:
    assert f"{Mode.NPUGRAPH_EX}" == str(Mode.NPUGRAPH_EX) == "npugraph_ex"
    assert json.dumps({"mode": Mode.REDUCE_OVERHEAD.value}) == json.dumps({"mode": "reduce-overhead"})
    assert Mode.MAX_AUTOTUNE == "max-autotune"


def test_a_finding_keeps_a_mode_and_writes_its_value() -> None:
    from airctl.verify.findings import Finding

    f = Finding("wait_dropped_at_tail", "error", "npugraph-ex", "m")
    assert f.mode is Mode.NPUGRAPH_EX and f.to_json()["mode"] == "npugraph_ex"
    assert Mode.parse(f.to_json()["mode"]) is f.mode  # a ledger's finding row reads back as its mode
    with pytest.raises(UnknownMode):
        Finding("wait_dropped_at_tail", "error", "eager", "m")


def test_a_ledger_that_names_no_mode_is_a_ledger_error() -> None:
    from airctl.errors import LedgerError
    from airctl.ledger.index import RunIndex

    index = RunIndex.from_json({"graphs": [{"id": "1-inference", "mode": "ge", "stages": []}], "mode": "aclgraph"})
    assert index.run_mode is Mode.REDUCE_OVERHEAD and index.graphs[0].graph_mode is Mode.MAX_AUTOTUNE
    assert RunIndex.from_json({"graphs": [], "config": {"mode": "npugraph_ex"}}).run_mode is Mode.NPUGRAPH_EX
    with pytest.raises(LedgerError, match="index.json.*unknown mode 'eager'"):
        _ = RunIndex.from_json({"graphs": [], "mode": "eager"}).run_mode


def test_the_ledger_writes_a_modes_value() -> None:
    from airctl.ledger.index import RunIndex

    index = RunIndex.from_json({"graphs": []})
    index.update({"mode": Mode.NPUGRAPH_EX})
    assert type(index.mode) is str and index.to_json()["mode"] == "npugraph_ex"


def test_a_debug_log_whose_mode_option_names_no_mode_is_refused_at_its_line(tmp_path: Path) -> None:
    from airctl.errors import GraphReadError
    from airctl.io.torchair_log import read_torchair_log

    line = ("[INFO] TORCHAIR(24998,python):2026-11-23 14:35:53.239.497 [fx2ge_converter.py:2002]24998   "
            "mode: {}\n")
    good, bad = tmp_path / "good.log", tmp_path / "bad.log"
    good.write_text(line.format("reduce-overhead"))
    bad.write_text(line.format("max-speed"))
    assert read_torchair_log(good).mode is Mode.REDUCE_OVERHEAD
    with pytest.raises(GraphReadError) as e:
        read_torchair_log(bad)
    assert (e.value.file, e.value.line) == (str(bad), 1) and "'max-speed'" in e.value.message
