"""Names from graphs, ledgers and pass files reach the terminal as text: no markup applied, no escape
sequence let through (the spinner's own test is in test_output.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import ColorSystem, Console

from airctl.cli import output

HOSTILE = "[red]x[/red]\x1b]0;owned\x07"
SHOWN = "[red]x[/red]\\x1b]0;owned\\x07"  # as a terminal shows it: the text, the controls spelled out


@pytest.fixture
def terminals(monkeypatch: pytest.MonkeyPatch) -> dict[str, io.StringIO]:
    """airctl's own stdout and stderr consoles as colour terminals, writing into strings (the console
    objects stay: modules hold them by ``from airctl.cli.output import out``)."""
    files = {"out": io.StringIO(), "err": io.StringIO()}
    for name, file in files.items():
        console = getattr(output, name)
        for attr, value in (("_file", file), ("_force_terminal", True), ("_color_system", ColorSystem.STANDARD),
                            ("_width", 200)):
            monkeypatch.setattr(console, attr, value)
    return files


def _check(text: str) -> None:
    assert SHOWN in text and "\x1b]0" not in text and "\x07" not in text, repr(text)


def test_a_fail_on_verdict_names_the_race_as_text(terminals: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    from airctl.cli import verdicts
    from airctl.errors import FindingsExit

    monkeypatch.setattr(verdicts, "judge_fail_on", lambda *a, **k: f"a race: {HOSTILE} reads mm")
    with pytest.raises(FindingsExit):
        verdicts.enforce_fail_on("race", object())
    _check(terminals["err"].getvalue())


def test_the_phase_table_titles_a_foreign_run_as_text(terminals: dict) -> None:
    from airctl.cli import show_views

    show_views.print_phases({"command": "compile", "run": HOSTILE, "rows": [], "wall_seconds": 1.0,
                             "unattributed_seconds": 0.0, "share": 1.0, "recorded": True})
    _check(terminals["out"].getvalue())


def test_a_skipped_eager_check_says_why_as_text() -> None:
    from airctl.cli import passes

    console = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=200, highlight=False)
    console.print(passes._check_text({"skipped": f"node {HOSTILE} has no value"}))
    _check(console.file.getvalue())


def _ledger_with_a_torchair_dump(root: Path, text: str) -> Path:
    """A ledger whose ge-optimized stage has TorchAir's own pbtxt, holding ``text``."""
    from airctl.io.read import read_graph, write_graph
    from tests.io.dumps import DUMPS

    (root / "graphs" / "g0").mkdir(parents=True)
    (root / "torchair").mkdir()
    (root / "graphs" / "g0" / "000.json").write_text(write_graph(read_graph(DUMPS / "stream" / "optimized.pbtxt"),
                                                                 "json"))
    (root / "torchair" / "dynamo_optimized_graph_1.pbtxt").write_text(text, encoding="utf-8")
    (root / "index.json").write_text(json.dumps({"mode": "max-autotune", "graphs": [
        {"id": "g0", "kind": "inference", "name": "graph_1",
         "stages": [{"index": 0, "name": "ge-optimized", "dialect": "ge", "file": "graphs/g0/000.json"}]}],
        "dumps": [{"file": "torchair/dynamo_optimized_graph_1.pbtxt", "graph": "graph_1", "type": "pbtxt",
                   "stage": "ge-optimized", "written_by": "torchair"}]}))
    return root


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_dump_prints_torchairs_own_file_without_its_controls_on_a_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terminal: bool) -> None:
    from typer.testing import CliRunner

    from airctl.cli import dump
    from airctl.cli.app import build_app

    colour = "\x1b[31mred"  # a CSI sequence: click strips these from what it echoes to no terminal
    root = _ledger_with_a_torchair_dump(tmp_path / "run", f'op {{\n  name: "{HOSTILE}{colour}"\n}}\n')
    monkeypatch.setattr(dump, "_terminal", lambda: terminal)
    monkeypatch.setattr(output.out, "_force_terminal", not terminal)  # rich's word is not what decides
    result = CliRunner().invoke(build_app(), ["dump", str(root), "--type", "pbtxt"])
    assert result.exit_code == 0, result.output
    if terminal:
        assert f'name: "{SHOWN}\\x1b[31mred"\n' in result.stdout and "\x1b" not in result.stdout, result.stdout
    else:  # redirected into a file: TorchAir's bytes as they are
        assert f'name: "{HOSTILE}{colour}"\n' in result.stdout, repr(result.stdout)
