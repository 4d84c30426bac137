"""Names from graphs, ledgers and pass files reach the terminal as text: no markup applied, no escape
sequence let through (the spinner's own test is in test_output.py)."""

from __future__ import annotations

import io

import pytest
from rich.console import ColorSystem, Console

from airctl.cli import output

HOSTILE = "[red]x[/red]\x1b]0;owned\x07"
SHOWN = "[red]x[/red]\\x1b]0;owned\\x07"  # as a terminal shows it: the text, the controls spelled out


@pytest.fixture
def terminals(monkeypatch: pytest.MonkeyPatch) -> dict[str, io.StringIO]:
    """airctl's stdout and stderr consoles as colour terminals, writing into strings."""
    files = {"out": io.StringIO(), "err": io.StringIO()}
    for name, file in files.items():
        monkeypatch.setattr(output, name, Console(file=file, force_terminal=True, color_system="standard",
                                                  highlight=False, soft_wrap=True, emoji=False, width=200))
        assert getattr(output, name)._color_system == ColorSystem.STANDARD
    return files


def _check(text: str) -> None:
    assert SHOWN in text and "\x1b]0" not in text and "\x07" not in text, repr(text)


def test_a_fail_on_verdict_names_the_race_as_text(terminals: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    from airctl.cli import verdicts
    from airctl.errors import FindingsExit

    monkeypatch.setattr(verdicts, "err", output.err)
    monkeypatch.setattr(verdicts, "judge_fail_on", lambda *a, **k: f"a race: {HOSTILE} reads mm")
    with pytest.raises(FindingsExit):
        verdicts.enforce_fail_on("race", object())
    _check(terminals["err"].getvalue())


def test_the_phase_table_titles_a_foreign_run_as_text(terminals: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    from airctl.cli import show_views

    monkeypatch.setattr(show_views, "out", output.out)
    show_views.print_phases({"command": "compile", "run": HOSTILE, "rows": [], "wall_seconds": 1.0,
                             "unattributed_seconds": 0.0, "share": 1.0, "recorded": True})
    _check(terminals["out"].getvalue())


def test_a_skipped_eager_check_says_why_as_text() -> None:
    from airctl.cli.passes import _check_text

    console = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=200, highlight=False)
    console.print(_check_text({"skipped": f"node {HOSTILE} has no value"}))
    _check(console.file.getvalue())
