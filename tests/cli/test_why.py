"""``airctl why`` in-process: the table from a ledger's ``events``, ``--json`` pure JSON, text escaped,
the one line of a run with none, and ``airctl show``'s section."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.ledger.writer import LedgerWriter

runner = CliRunner()


def ledger(out: Path, events: list[dict]) -> Path:
    writer = LedgerWriter.create(out, "why", command="run", graphs=[])
    for event in events:
        writer.add_event(event)
    writer.finish()
    return writer.root


def why(*args: str | Path):  # noqa: ANN201
    return runner.invoke(build_app(), ["why", *map(str, args)])


BREAK = {"kind": "graph_break", "reason": "Data-dependent branching [bold]x[/bold]", "file": "/m.py", "line": 17,
         "compile_id": "0/0", "dynamo_hint": "Use `torch.cond` to express dynamic control flow."}


def test_json_is_pure_json_with_every_row(tmp_path: Path) -> None:
    root = ledger(tmp_path, [BREAK, {"kind": "recompile", "reason": "x.size(0) was 4, now 8", "file": "/m.py",
                                     "line": 16, "guard": "shape", "input": "x", "dim": 0}])
    r = why("--out", tmp_path, "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["run_id"] == root.name and data["summary"] == "1 graph break, 1 recompile: airctl why"
    assert [(row["n"], row["class"], row["where"]) for row in data["rows"]] == [
        (1, "graph break", "/m.py:17"), (2, "recompile", "/m.py:16")]


def test_text_from_logs_is_shown_as_written_never_as_markup(tmp_path: Path) -> None:
    ledger(tmp_path, [BREAK])
    r = why("--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert "Data-dependent branching [bold]x[/bold]" in r.stdout
    assert "hint: Use `torch.cond` to express dynamic control flow." in r.stdout
    assert "/m.py:17 · compile 0/0" in r.stdout


def test_a_run_with_none_says_so_in_one_line(tmp_path: Path) -> None:
    ledger(tmp_path, [])
    r = why("--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert r.stdout.strip().splitlines() == [
        "why: no graph breaks, recompiles, recaptures or compile-cache misses in this run"]


def test_a_run_id_picks_the_run_and_an_unknown_one_is_an_input_error(tmp_path: Path) -> None:
    first = ledger(tmp_path, [BREAK])
    ledger(tmp_path, [])
    assert json.loads(why(first.name, "--out", tmp_path, "--json").stdout)["counts"] == {"graph_break": 1}
    r = why("no-such-run", "--out", tmp_path)
    assert r.exit_code == 2 and "no run 'no-such-run'" in r.output


def test_show_prints_the_table_after_the_summary(tmp_path: Path) -> None:
    ledger(tmp_path, [BREAK])
    r = runner.invoke(build_app(), ["show", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "why: 1 graph break (recorded)" in r.stdout


def test_an_imported_torch_logs_file_gives_the_table(tmp_path: Path) -> None:
    log = Path(__file__).resolve().parents[2] / "fixtures" / "imports" / "why" / "torch_logs.txt"
    r = runner.invoke(build_app(), ["import", "--out", str(tmp_path), str(log)])
    assert r.exit_code == 0, r.output
    assert "2 graph breaks, 2 recompiles: airctl why" in r.output
    data = json.loads(why("--out", tmp_path, "--json").stdout)
    assert data["origin"] == "imported"
    assert [(row["class"], row["where"].rsplit("/", 1)[-1]) for row in data["rows"]] == [
        ("graph break", "data_branch.py:17"), ("recompile", "batch_size.py:16"), ("recompile", "batch_size.py:16"),
        ("graph break", "print_in_forward.py:17")]
    assert all(row["detail"]["source"] == str(log) for row in data["rows"])
