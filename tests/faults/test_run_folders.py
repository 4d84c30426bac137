"""Issue 47, items 4-6, 8, 11 and 12: run folders, paths, settings, encodings and streams users break.

Each test is one reproduction of the audit and failed before the fix: a malformed index broke
`airctl runs` for every run, `-o` overwrote the current-run pointer, `runs` on a file said "no
run yet", a dangling `airctl-runs` link said "File exists", bad ``AIRCTL_*`` values were taken
silently, a newline in a path split lines, an ASCII terminal turned a good run into exit 70, a
model that chdirs lost its ledger, one that closed its streams made airctl exit 1 with status ok,
and junk after a trace's JSON went unsaid.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.faults.bounded import airctl_capped
from tests.faults.in_process import DUMP, airctl, no_traceback


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    out = tmp_path / "runs"
    for _ in range(2):
        no_traceback(airctl("import", DUMP, "--out", out, "--no-report"), 0)
    return out


@pytest.mark.parametrize("damage", [{"status": 5}, {"passes": 7}, {"command": ["compile"]},
                                    {"execution": {"races": 3}}, {"timings": {"total_seconds": "soon"}}])
def test_a_run_with_a_wrongly_typed_index_is_listed_unreadable_and_the_others_still_are(
        runs: Path, damage: dict) -> None:
    bad, good = sorted(p for p in runs.iterdir() if p.is_dir())
    index = json.loads((bad / "index.json").read_text())
    (bad / "index.json").write_text(json.dumps({**index, **damage}))
    text = no_traceback(airctl("runs", "--out", runs), 0)
    assert good.name in text and f"{bad.name}: unreadable: malformed index.json: '" in text, text
    rows = json.loads(no_traceback(airctl("runs", "--out", runs, "--json"), 0))["runs"]
    assert {r["id"]: r["status"] for r in rows}[bad.name] == "unreadable"


@pytest.mark.parametrize("command", [["dump", "{run}", "-o"], ["diff", "{run}", "{run}", "--html"]])
def test_the_current_run_pointer_is_refused_as_output(runs: Path, command: list[str]) -> None:
    pointer = runs / "latest"
    before = pointer.read_text()
    run = next(p for p in runs.iterdir() if p.is_dir())
    text = no_traceback(airctl(*[a.format(run=run) for a in command], pointer), 2)
    assert "it is the current-run pointer" in text and pointer.read_text() == before
    no_traceback(airctl("show", "--out", runs), 0)  # the folder still works


@pytest.mark.parametrize("kind", ["file", "/dev/null", "dangling link"])
def test_runs_on_something_that_is_not_a_folder_is_an_error_not_no_run_yet(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "out"
    if kind == "file":
        out.write_text("x")
    elif kind == "dangling link":
        out.symlink_to(tmp_path / "nowhere")
    else:
        out = Path("/dev/null")
    for command in ("runs", "show"):
        text = no_traceback(airctl(command, "--out", out), 2)
        assert "no run" not in text and ("is not a folder" in text or "is a link to nothing" in text), text


def test_a_dangling_runs_link_is_named_when_a_run_starts(tmp_path: Path) -> None:
    out = tmp_path / "airctl-runs"
    out.symlink_to(tmp_path / "gone")
    text = no_traceback(airctl("import", DUMP, "--out", out, "--no-report"), 2)
    assert "is a link to nothing" in text and "File exists" not in text, text


@pytest.mark.parametrize("value", ["abc", "-1", "nan", "inf", "0"])
def test_a_bad_tool_timeout_setting_is_an_error_naming_the_variable(tmp_path: Path, value: str) -> None:
    text = no_traceback(airctl("runs", "--out", tmp_path, env={"AIRCTL_TOOL_TIMEOUT": value}), 2)
    assert f"AIRCTL_TOOL_TIMEOUT={value!r} is not valid" in text


def test_every_checked_setting_refuses_a_bad_value(tmp_path: Path) -> None:
    from airctl.settings import SETTINGS

    for setting in SETTINGS:
        text = no_traceback(airctl("runs", "--out", tmp_path, env={setting.name: "maybe"}), 2)
        assert setting.name in text


def test_a_newline_in_a_model_path_is_shown_escaped(tmp_path: Path) -> None:
    text = no_traceback(airctl("compile", tmp_path / "new\nline.py", "--out", tmp_path / "runs"), 2)
    assert "new\\nline.py: error: model script not found" in text, text


def test_junk_after_the_end_of_a_trace_is_a_warning_naming_the_file(tmp_path: Path, caplog) -> None:  # noqa: ANN001
    from airctl.profile.ascend.trace_stream import iter_events

    trace = tmp_path / "trace_view.json"
    trace.write_text('{"traceEvents": [{"name": "a", "ph": "X"}]}\n{"junk": 1}')
    with caplog.at_level(logging.WARNING, logger="airctl"):
        assert [e["name"] for e in iter_events(trace)] == ["a"]
    assert f"{trace}:2: warning: more data after the end" in caplog.text


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_output_the_terminal_cannot_encode_is_replaced_never_an_error(runs: Path, encoding: str) -> None:
    for command in (["runs"], ["show"]):
        ended = airctl_capped(*command, "--out", runs, cwd=runs.parent, env={"PYTHONIOENCODING": encoding})
        assert ended.returncode == 0 and "internal error" not in ended.text, ended.text[-2000:]


CHDIR = """import os, tempfile, torch
def get_model():
    os.chdir(tempfile.mkdtemp())
    return torch.nn.Linear(2, 2)
def get_inputs():
    return (torch.randn(2, 2),)
"""
CLOSES = """import os, sys, torch
def get_model():
    sys.stdout.close()
    os.close(2)
    return torch.nn.Linear(2, 2)
def get_inputs():
    return (torch.randn(2, 2),)
"""


@pytest.mark.slow
@pytest.mark.parametrize("script", [CHDIR, CLOSES], ids=["chdir", "closes-streams"])
def test_a_model_that_moves_or_closes_what_airctl_uses_still_ends_ok(tmp_path: Path, script: str) -> None:
    (tmp_path / "model.py").write_text(script)
    ended = airctl_capped("compile", "model.py", cwd=tmp_path, timeout=300)  # the default, relative --out
    assert ended.returncode == 0, ended.text[-3000:]
    (run,) = [p for p in (tmp_path / "airctl-runs").iterdir() if p.is_dir()]
    assert json.loads((run / "index.json").read_text())["status"] == "ok"
    assert (tmp_path / "airctl-runs" / "latest").read_text().strip() == run.name
