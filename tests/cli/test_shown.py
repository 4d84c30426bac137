"""airctl/cli/shown.py: one place decides what stdout gets (the result's JSON, or its view), for every command."""

from __future__ import annotations

import json
from typing import Any

import click
import pytest
import typer

from airctl.cli.app import build_app
from airctl.cli.shown import Shown, json_wanted, reports
from airctl.errors import FindingsExit


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    if hasattr(group, "list_commands"):  # a group (typer has click of its own: not click.Group)
        ctx = click.Context(group)
        return [c for name in group.list_commands(ctx) for c in _commands(group.get_command(ctx, name), (*path, name))]
    return [(" ".join(path), group)]


def test_every_command_with_json_declares_it_through_reports() -> None:
    """A command that declared ``--json`` itself would branch on it itself (and render its own way)."""
    commands = _commands(typer.main.get_command(build_app()))
    with_json = [(name, c) for name, c in commands if any("--json" in p.opts for p in c.params)]
    assert len(with_json) >= 18, [name for name, _ in with_json]
    assert [name for name, c in with_json if not getattr(c.callback, "airctl_reports", False)] == []


class _Found:
    def __init__(self, n: int) -> None:
        self.n = n

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n}


def _command(seen: list[str]) -> Any:
    @reports("Print the count as JSON.")
    def count(n: int = typer.Option(1, "--n")) -> Shown:
        print("the model prints this")
        found = _Found(n)

        def verdict() -> None:
            seen.append(f"verdict json={json_wanted()}")
            if n > 2:
                raise FindingsExit(n)

        return Shown(found, lambda: print(f"found {found.n}"), verdict)

    return count


@pytest.mark.parametrize("as_json", [True, False])
def test_stdout_gets_the_json_or_the_view_and_the_verdict_comes_last(as_json: bool, capsys) -> None:
    seen: list[str] = []
    _command(seen)(n=2, as_json=as_json)
    out, err = capsys.readouterr()
    if as_json:
        assert json.loads(out) == {"n": 2}  # and nothing else: the model's print went to stderr
        assert "the model prints this" in err
    else:
        assert out == "the model prints this\nfound 2\n"
    assert seen == [f"verdict json={as_json}"]


def test_a_verdict_ends_the_command_after_its_json(capsys) -> None:
    with pytest.raises(FindingsExit):
        _command([])(n=3, as_json=True)
    assert json.loads(capsys.readouterr().out) == {"n": 3}


def test_the_option_is_declared_once_with_the_commands_words() -> None:
    app = typer.Typer()
    app.command("count")(_command([]))
    params = {p.name: p for p in typer.main.get_command(app).params}
    assert params["as_json"].opts == ["--json"] and params["as_json"].help == "Print the count as JSON."
    assert params["n"].opts == ["--n"]
