"""``airctl import`` in-process, then every other command on the imported ledger; ``airctl check`` on
TorchAir's DEBUG logs, `graph():` listings and GE dumps given directly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from airctl.cli.app import build_app

REPO = Path(__file__).resolve().parents[2]
IMPORTS = REPO / "fixtures" / "imports"
CHECKS = REPO / "fixtures" / "checks"
runner = CliRunner()


def airctl(*args: object):  # noqa: ANN201
    return runner.invoke(build_app(), [str(a) for a in args])


def test_import_then_report_check_dump_diff_profile(tmp_path: Path) -> None:
    folder = tmp_path / "from-npu"
    shutil.copytree(IMPORTS / "ma_tcd", folder)
    shutil.copytree(REPO / "fixtures" / "profiles" / "npu_two_streams", folder / "prof")
    r = airctl("import", folder, "--out", tmp_path / "runs")
    assert r.exit_code == 0, r.output
    ledger = Path(r.stdout.strip().splitlines()[-1].removeprefix("ledger: "))
    assert "after:post_grad_custom_pre_pass" in r.stdout and "imported 1 graph(s), 20 stage(s)" in r.stderr
    index = json.loads((ledger / "index.json").read_text())
    assert (ledger / "report.html").is_file() and index["report"] == "report.html"
    assert index["profiles"][0]["path"].endswith("_ascend_pt")

    r = airctl("check", ledger, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["errors"] == 0, r.output
    r = airctl("dump", ledger, "--stage", "ge-optimized", "--type", "fx")
    assert r.exit_code == 0 and "Sub = Sub(arg0_1:0, MatMul:0, ^Abs)" in r.stdout
    r = airctl("diff", ledger)
    assert r.exit_code == 0, r.output
    prof = next((folder / "prof").glob("*_ascend_pt"))
    r = airctl("profile", "analyze", prof, "--run", ledger, "--json")
    assert r.exit_code == 0, r.output
    assert (ledger / "profile").is_dir()


def test_import_json_and_usage_errors(tmp_path: Path) -> None:
    r = airctl("import", IMPORTS / "ma_txt", "--out", tmp_path, "--json", "--no-report")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["index"]["command"] == "import" and doc["problems"] == [] and Path(doc["ledger"]).is_dir()
    r = airctl("import", tmp_path / "nothing-here")
    assert r.exit_code == 2 and "no such file or folder" in r.stderr
    r = airctl("check", IMPORTS / "ma_txt")
    assert r.exit_code == 2 and "airctl import" in r.stderr


def test_check_a_debug_log_names_the_log_line() -> None:
    r = airctl("check", CHECKS / "logs" / "wait_dropped_at_tail.log")
    assert r.exit_code == 1, r.output
    assert "wait_dropped_at_tail.log:236: error[wait_dropped_at_tail R8]" in r.stdout
    assert "(graph_1, fx-final)" in r.stdout
    r = airctl("check", CHECKS / "logs" / "pass_returned_new_graph.log", "--json")
    assert r.exit_code == 0  # a warning: a custom pass with nothing to do looks the same
    (finding,) = json.loads(r.stdout)["findings"]
    assert finding["rule"] == "pass_returned_new_graph" and finding["severity"] == "warning"


def test_check_a_saved_listing_and_a_ge_dump() -> None:
    r = airctl("check", CHECKS / "listings" / "scope_args_not_lists.txt", "--json")
    assert r.exit_code == 1
    assert [f["rule"] for f in json.loads(r.stdout)["findings"]] == ["scope_args_not_lists"]
    r = airctl("check", CHECKS / "dumps" / "scope_args_not_lists.txt")
    assert r.exit_code == 1 and "one-letter attributes" in r.stdout and "default stream" in r.stdout


def test_check_a_log_without_listings_says_how_to_get_them(tmp_path: Path) -> None:
    log = tmp_path / "info.log"
    log.write_text("[INFO] TORCHAIR(1,python):2026-01-01 00:00:00.000.000 [utils.py:9]1 hello\n")
    r = airctl("check", log)
    assert r.exit_code == 2 and "lists no FX graph" in r.stderr and "logger.setLevel(logging.DEBUG)" in r.stderr


def test_check_a_broken_listing_names_file_and_line(tmp_path: Path) -> None:
    text = (CHECKS / "listings" / "record_before_any_op.txt").read_text().split("\n")
    text[4] = "    %mm : garbage"
    bad = tmp_path / "fx_graph.txt"
    bad.write_text("\n".join(text))
    r = airctl("check", bad)
    assert r.exit_code == 2 and f"{bad}:5: error: not a node line" in r.stderr


def test_check_a_compile_ledgers_own_log(tmp_path: Path) -> None:
    """``airctl compile`` writes TorchAir's records in airctl's own line format (log.txt.gz): they read
    as a TorchAir log, with the same findings at the same lines."""
    import gzip
    import re

    native = (CHECKS / "logs" / "wait_dropped_at_tail.log").read_text().split("\n")
    record = re.compile(r"^\[(\w+)\] TORCHAIR\(\d+,[^)]*\):(\S+ \d\d:\d\d:\d\d)\.(\d{3})\.\d{3} \[([^\]]+)\]\d+ (.*)$")
    lines = [record.sub(r"\2,\3 \1 torchair [\4] \5", line) for line in native]
    assert sum(a != b for a, b in zip(lines, native, strict=True)) == 153  # every record rewritten, continuations kept
    log = tmp_path / "log.txt.gz"
    log.write_bytes(gzip.compress("\n".join(lines).encode()))
    r = airctl("check", log)
    assert r.exit_code == 1, r.output
    assert f"{log}:236: error[wait_dropped_at_tail R8]" in r.stdout and "(graph_1, fx-final)" in r.stdout
