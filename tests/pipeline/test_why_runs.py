"""``airctl why`` on scripts that make a known list of events (fixtures/scripts/why/): every event
listed with its class and line, nothing else; and the same table from the script's imported DEBUG
log as from the run (issue 45's acceptance)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.pipeline.why import why_run
from airctl.sim.child import SITE_DIR
from airctl.why import WhyTable

pytestmark = pytest.mark.slow
SCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "scripts" / "why"
ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

# script -> the events it makes: (class, event, script line); `where` is the line in the script: a graph
# break's own line, a recompile's and a recapture's call (the line that passed the new input)
EXPECTED = {
    "data_branch.py": [("graph break", "graph break", 17)],
    "print_in_forward.py": [("graph break", "graph break", 17)],
    "batch_size.py": [("recompile", "recompile", 24), ("recompile", "recompile", 24)],
    "recompile_limit.py": [("recompile", "recompile", 27), ("recompile", "recompile limit", 27)],
    "capture_limit.py": [("recompile", "recompile", 27), ("recapture", "recapture", 27),
                         ("recapture", "fell back to eager", 27)],
    "keyword_inputs.py": [("recompile", "recompile", 36)],
}
# the recompiled function's line (Dynamo's): all an imported log can tell of a recompile
DEF_LINE = {"batch_size.py": 16, "recompile_limit.py": 18, "capture_limit.py": 18, "keyword_inputs.py": 15}


def airctl(*args: str | Path) -> str:
    r = runner.invoke(build_app(), [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.output


def rows(table: WhyTable, script: str) -> list[tuple[str, str, int | None]]:
    out = []
    for row in table.iter_rows():
        file, _, line = (row.where or "").rpartition(":")
        assert Path(file).name == script, row  # nothing from elsewhere
        out.append((row.cls, row.what, int(line) if line else None))
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, WhyTable]:
    """Each script run once with ``airctl run`` (its table)."""
    tables = {}
    for script in sorted(EXPECTED):
        out = tmp_path_factory.mktemp("runs")
        airctl("run", "--out", out, "--backend", "sim", SCRIPTS / script)
        tables[script] = why_run(None, out)
    return tables


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_every_event_of_the_script_is_listed_with_its_class_and_line(script: str,
                                                                     recorded: dict[str, WhyTable]) -> None:
    table = recorded[script]
    assert rows(table, script) == EXPECTED[script]
    assert {r.detail["line"] for r in table.iter_rows() if r.cls == "recompile"} <= {DEF_LINE.get(script)}
    assert all(r.reason and r.hint for r in table.iter_rows())
    # the ledger graph each produced or concerns; a recompile limit compiles nothing
    assert all((r.graph is not None) == (r.kind != "recompile_limit") for r in table.iter_rows())


def test_the_reasons_are_in_words(recorded: dict[str, WhyTable]) -> None:
    table = list(recorded["batch_size.py"].iter_rows())
    assert [r.reason for r in table] == ["x.size(0) was 4, now 8", "x.size(0) was 8, now 16"]
    assert [(r.graph, r.compile_id) for r in table] == [("2-forward", "0/1"), ("3-forward", "0/2")]
    assert "automatic dynamic shapes are off" in (table[1].hint or "")
    assert [r.reason for r in recorded["capture_limit.py"].iter_rows()][1:] == [
        "input shapes changed: [8] (captured before: [6])",
        "capture_limit 2 reached: every later call runs eagerly (call 3)"]


def test_a_keyword_input_is_named_in_valid_python(recorded: dict[str, WhyTable]) -> None:
    (row,) = recorded["keyword_inputs.py"].iter_rows()
    assert row.reason == "kwargs['input_ids'].size(1) was 16, now 24"
    compile(row.reason.split(" was ")[0], "<reason>", "eval")  # Python, as the user would write it
    assert "torch._dynamo.mark_dynamic(input_ids, 1)" in (row.hint or "")


IMPORTED = ["capture_limit.py", "data_branch.py", "batch_size.py", "recompile_limit.py"]


@pytest.fixture(scope="module")
def debug_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each script run as plain Python with TORCH_LOGS and TorchAir's DEBUG log (sim for its torch_npu and
    torchair imports, as a child of a sim run gets it), one log per script."""
    out = tmp_path_factory.mktemp("logs")
    env = {**os.environ, "TORCH_LOGS": "graph_breaks,recompiles", "AIRCTL_SIM_CHILD": "1",
           "TORCH_DEVICE_BACKEND_AUTOLOAD": "0",
           "PYTHONPATH": os.pathsep.join([str(SITE_DIR), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, str(Path(__file__).with_name("why_debug_run.py")), str(out),
                    *(str(SCRIPTS / s) for s in IMPORTED)], env=env, check=True, timeout=600)
    return out


def _shown(table: WhyTable) -> list[tuple[object, ...]]:
    """A row as both tables can tell it: a recapture's and a recompile's call line is known to a recorded
    run only (a recompile is compared by the function's line), and a graph is compared by its Dynamo graph
    number (an import cannot tell a forward graph whose backward never ran from an inference graph:
    `2-forward` recorded is `2-inference` imported)."""
    return [(r.cls, r.what, r.reason, None if r.cls == "recapture" else
             f"{r.detail.get('file')}:{r.detail.get('line')}" if r.cls == "recompile" else r.where,
             (r.graph or "").split("-")[0], r.compile_id, r.hint) for r in table.iter_rows()]


@pytest.mark.parametrize("script", IMPORTED)
def test_an_imported_debug_log_gives_the_runs_table(script: str, tmp_path: Path, recorded: dict[str, WhyTable],
                                                     debug_logs: Path) -> None:
    log = debug_logs / f"{Path(script).stem}.log"
    airctl("import", "--out", tmp_path / "imported", log)
    imported = why_run(None, tmp_path / "imported")
    assert imported.origin == "imported" and recorded[script].origin == "recorded"
    assert _shown(imported) == _shown(recorded[script])
    assert len(list(imported.iter_rows())) == len(EXPECTED[script])
    assert all(bool(r.graph) == (r.kind != "recompile_limit") for r in imported.iter_rows())


def test_compile_says_so_in_one_line_and_lists_the_graph_break(tmp_path: Path) -> None:
    output = airctl("compile", "--out", tmp_path, "--backend", "sim", "--capture", "minimal",
                    ROOT / "fixtures" / "models" / "graph_break.py")
    assert "1 graph break: airctl why" in output
    (row,) = why_run(None, tmp_path).iter_rows()
    assert (row.cls, Path(row.where or "").name, row.graph) == ("graph break", "graph_break.py:15", "1-forward")


def test_a_cached_compile_run_twice_then_edited(tmp_path: Path) -> None:
    script = tmp_path / "cached.py"
    script.write_text((SCRIPTS / "cached.py").read_text())
    out, cache = tmp_path / "runs", tmp_path / "cache"

    def why() -> list[tuple[str, str, int | None]]:
        airctl("run", "--out", out, "--backend", "sim", script, cache)
        return rows(why_run(None, out), "cached.py")

    assert why() == [("compile cache", "miss", 21)]
    assert why() == [("compile cache", "hit", 21)]
    script.write_text(script.read_text().replace("* 2\n", "* 3\n"))  # forward's code: TorchAir's key misses it
    assert why() == [("compile cache", "stale hit", 21)]
    script.write_text(script.read_text().replace("Linear(8, 8)", "Linear(8, 8, bias=False)"))  # the module
    assert why() == [("compile cache", "miss", 21)]
    last = next(why_run(None, out).iter_rows())
    assert last.detail["changed"] == ["module"] and "module" in (last.hint or "")
