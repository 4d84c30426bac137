"""``airctl why`` in-process: the table from a ledger's ``events``, ``--json`` pure JSON, text escaped,
the one line of a run with none, and ``airctl show``'s section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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


def test_a_failed_run_with_no_events_points_to_show(tmp_path: Path) -> None:
    writer = LedgerWriter.create(tmp_path, "why", command="compile", graphs=[])
    writer.set_error("TorchAir failed to compile the model: boom", {})
    writer.finish(status="failed")
    r = why("--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert "the run failed (TorchAir failed to compile the model: boom)" in r.stdout
    assert f"`airctl show {writer.root.name}`" in r.stdout
    assert json.loads(why("--out", tmp_path, "--json").stdout)["failed"].startswith("TorchAir failed")


def big_index(out: Path, n: int) -> Path:
    """A ledger whose index holds ``n`` recompiles, written straight as JSON (as a long run leaves it)."""
    root = ledger(out, [])
    path = root / "index.json"
    data = json.loads(path.read_text())
    data["events"] = [{"kind": "recompile", "seq": float(i), "reason": f"x.size(0) was {i}, now {i + 1}",
                       "file": "/m.py", "line": i % 50, "guard": "shape", "input": "x", "dim": 0,
                       "compile_id": f"0/{i}", "guard_failures": [f"tensor 'x' size mismatch {i}" * 4]}
                      for i in range(n)]
    path.write_text(json.dumps(data))
    return root


@pytest.mark.slow
def test_json_of_a_long_run_is_written_in_bounded_memory(tmp_path: Path) -> None:
    """60k events (an 18 MB index): read whole, its rows and one JSON document took over 400 MB; read one
    event at a time, the command's peak is its imports' and a read buffer's (issue 63)."""
    import os
    import subprocess
    import sys

    big_index(tmp_path, 60_000)
    probe = ("import resource, sys\n"
             "from airctl.cli.main import run\n"
             "code = 0\n"
             "try:\n    run(['why', '--json', '--out', sys.argv[1]])\n"
             "except SystemExit as e:\n    code = e.code\n"
             # VmHWM, not ru_maxrss: that survives exec, so it would carry the forking worker's size
             "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
             "print(hwm, code, file=sys.stderr)\n")
    # a user's fresh process: the environment a test worker has gathered (sim's child settings, other tests'
    # variables) is not the command's to carry
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[2]), AIRCTL_WARM="0", TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=300)
    peak_kb, code = done.stderr.split()[-2:]
    assert code in ("0", "None"), done.stderr
    assert json.loads(done.stdout)["counts"] == {"recompile": 60_000}
    assert int(peak_kb) < 200 * 1024, f"peak {int(peak_kb) >> 10} MB"


def test_streamed_json_is_the_tables_json(tmp_path: Path) -> None:
    big_index(tmp_path, 30)
    r = why("--out", tmp_path, "--json")
    from airctl.pipeline.why import why_run

    assert json.loads(r.stdout) == why_run(None, tmp_path).to_json()
    assert r.stdout == json.dumps(why_run(None, tmp_path).to_json(), indent=2) + "\n"


def test_the_terminal_shows_the_first_rows_of_a_long_run(tmp_path: Path) -> None:
    big_index(tmp_path, 300)
    r = why("--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert "… and 100 more: `airctl why --json` (or --limit 0) lists every row" in r.stdout
    assert "… and" not in why("--out", tmp_path, "--limit", "0").stdout


def test_the_streamed_table_is_the_in_memory_one(tmp_path: Path) -> None:
    """`why` reads the index one event at a time, `show` and the report from the loaded index: one table."""
    from airctl.ledger.reader import Ledger
    from airctl.pipeline.why import why_run
    from airctl.why import why_table

    writer = LedgerWriter.create(tmp_path, "why", command="run", graphs=[])
    for event in [BREAK, {"kind": "recompile", "reason": "x.size(0) was 4, now 8", "file": "/m.py", "line": 16,
                          "guard": "shape", "input": "x", "dim": 0, "compile_id": "0/2"},
                  {"kind": "recompile_limit", "reason": "limit", "file": "/m.py", "compile_id": "0/2"},
                  {"kind": "cache_hit", "reason": "loaded", "stale": True, "cache": "/c"}]:
        writer.add_event(event)
    writer.set(captures=[{"graph": "1-inference", "event": "recapture", "call": 2, "reason": "shapes", "seq": 0.0}])
    writer.finish()
    streamed = why_run(None, tmp_path).to_json()
    assert streamed == why_table(Ledger.open(writer.root).index).to_json()
    assert streamed["counts"] == {"graph_break": 1, "recompile_limit": 1, "cache_stale": 1, "recapture": 1}


def test_a_bad_event_in_a_streamed_index_is_an_input_error_naming_it(tmp_path: Path) -> None:
    root = big_index(tmp_path, 3)
    path = root / "index.json"
    data = json.loads(path.read_text())
    data["events"][2]["seq"] = "soon"
    path.write_text(json.dumps(data))
    r = why("--out", tmp_path, "--json")
    assert r.exit_code == 2 and "events[2]" in r.output and "index.json" in r.output
