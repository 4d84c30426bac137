"""airctl/cli/output.py: the progress spinner."""

from __future__ import annotations

import threading

from airctl.cli import output


def test_no_spinner_thread_where_stderr_is_no_terminal(monkeypatch) -> None:
    """rich's transient spinner shows nothing in a pipe or file, yet its thread woke 12.5 times a
    second and took the GIL from the compile: off a terminal nothing runs."""
    monkeypatch.setattr(output.err, "_force_terminal", False)
    before = set(threading.enumerate())
    with output.status("compiling…") as spinner:
        spinner.update("running eager PyTorch for reference")
        assert set(threading.enumerate()) == before


def test_a_terminal_gets_the_spinner_at_a_low_rate(monkeypatch) -> None:
    monkeypatch.setattr(output.err, "_force_terminal", True)
    with output.status("compiling…") as spinner:
        spinner.update("compiling through TorchAir")
        live = spinner._spinner._live
        assert live.refresh_per_second == output.SPINNER_PER_SECOND < 12.5
        thread = live._refresh_thread
        assert thread is not None and thread.is_alive()
    thread.join(timeout=5)  # rich stops it (sets its event) without waiting for it
    assert not thread.is_alive()


def test_the_spinner_shows_its_messages_as_text(monkeypatch) -> None:
    """Progress names model files, nodes and streams: ``[/v2]`` in a path raised rich's MarkupError and ended
    the command; markup in a node name was applied and an ESC reached the terminal."""
    monkeypatch.setattr(output.err, "_force_terminal", True)
    with output.status("compiling…") as spinner:
        spinner.update("loading exp[/v2]/m.py, node [red]x\x1b]0;owned\x07")
        shown = spinner._spinner.renderable.text
    assert shown.plain == "loading exp[/v2]/m.py, node [red]x\\x1b]0;owned\\x07" and not shown.spans
