"""Fixtures of the command tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def coloured_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    """airctl's stdout console as on a colour terminal (CliRunner's stdout is none, so rich drops styles)."""
    from rich.console import ColorSystem

    from airctl.cli import output

    monkeypatch.setattr(output.out, "_force_terminal", True)
    monkeypatch.setattr(output.out, "_color_system", ColorSystem.STANDARD)
