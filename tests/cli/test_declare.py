"""airctl/cli/declare.py: one decorator declares a command (its --json, its every-mode options), one
layout for every command's --help."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from airctl.cli import named_run
from airctl.cli.declare import command, help_text
from airctl.cli.named_run import IN_OUT, IN_RUNS, NamedRun
from airctl.cli.shown import Shown
from airctl.cli.target import EVERY_MODE, EveryMode


def _options(app: typer.Typer) -> set[str]:
    return {opt for p in typer.main.get_command(app).params for opt in p.opts}


def test_help_text_puts_the_examples_under_one_heading_one_paragraph_each() -> None:
    assert help_text("Do it.\n\nCarefully.", "airctl x a", "airctl x b", then="Exit 1 on a race.") == (
        "Do it.\n\nCarefully.\n\n[bold]Examples[/bold]\n\n  airctl x a\n\n  airctl x b\n\nExit 1 on a race.\n")
    assert help_text("Do it.", "airctl x").endswith("[bold]Examples[/bold]\n\n  airctl x\n")
    assert help_text("Do it.") == "Do it.\n"  # no heading over no examples


def test_a_command_taking_every_mode_gets_its_options_and_json() -> None:
    app = typer.Typer(add_completion=False)
    seen: list[EveryMode] = []

    @command(app, "go", help="Go.")
    def go(n: int = typer.Option(1, "--n"), every: EveryMode = EVERY_MODE) -> Shown:
        seen.append(every)
        return Shown({"n": n, "seed": every.seed})

    assert {"--n", "--json", "--seed", "--backend"} <= _options(app)
    result = CliRunner().invoke(app, ["--n", "2", "--seed", "7", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"n": 2, "seed": 7} and seen[0].seed == 7


def test_a_command_without_a_result_or_every_mode_gets_neither() -> None:
    app = typer.Typer(add_completion=False)

    @command(app, "plain", json=None)
    def plain(n: int = typer.Option(1, "--n")) -> None:
        """Plain: its docstring is its help."""

    assert _options(app) == {"--n"}
    assert "Plain: its docstring is its help." in CliRunner().invoke(app, ["--help"]).stdout


def test_a_command_taking_a_named_run_gets_run_its_option_and_its_folder(tmp_path) -> None:
    app = typer.Typer(add_completion=False)
    seen: list[NamedRun] = []

    @command(app, "read", json=None)
    def read(which: NamedRun = IN_RUNS, out: str = typer.Option("x", "--out", "-o")) -> None:
        seen.append(which)

    assert _options(app) == {"given", "--run", "-r", "--runs", "--out", "-o"}  # given: RUN, the positional
    assert CliRunner().invoke(app, ["20261207-1", "--runs", str(tmp_path), "-o", "y"]).exit_code == 0
    assert seen[-1] == NamedRun("20261207-1", None, tmp_path, "--runs")
    CliRunner().invoke(app, ["--run", "latest"])
    assert seen[-1].run == "latest" and seen[-1].given is None and seen[-1].option == "--runs"


def test_a_named_run_resolves_through_the_source_resolver(tmp_path) -> None:
    from airctl.errors import AirctlError

    with pytest.raises(AirctlError, match="not both"):
        _ = NamedRun("a", "b", tmp_path).root
    with pytest.raises(AirctlError) as raised:  # no run in the folder: the hint names the folder's option
        _ = NamedRun(folder=tmp_path, option="--runs").root
    assert "no run in" in raised.value.message and "--runs DIR" in raised.value.hint


def test_a_declaration_typer_would_misread_is_refused_naming_the_command() -> None:
    """Annotated otherwise, ``which`` or ``every`` would quietly become one option ``--which``/``--every``."""
    app = typer.Typer(add_completion=False)
    with pytest.raises(TypeError, match="command read: its parameter `which`"):
        @command(app, "read", json=None)
        def read(which: str = "x") -> None: ...
    with pytest.raises(TypeError, match=r"\['run'\] are the names"):
        @command(app, "clash", json=None)
        def clash(which: NamedRun = IN_OUT, run: int = typer.Option(1, "--n")) -> None: ...
    with pytest.raises(TypeError, match=r"seeded: its parameters \['seed'\] are the names"):  # every-mode's too
        @command(app, "seeded", json=None)
        def seeded(every: EveryMode = EVERY_MODE, seed: int = typer.Option(1, "--s")) -> None: ...
    with pytest.raises(TypeError, match="IN_OUT or IN_RUNS"):
        @command(app, "bare", json=None)
        def bare(which: NamedRun) -> None: ...
    with pytest.raises(TypeError, match="command go: annotate `every` as EveryMode"):
        @command(app, "go", json=None)
        def go(every: EveryMode | None = None) -> None: ...


def test_an_annotation_through_its_module_is_recognised() -> None:
    app = typer.Typer(add_completion=False)

    @command(app, "read", json=None)
    def read(which: named_run.NamedRun = IN_OUT) -> None: ...

    assert {"--run", "--out"} <= _options(app)
