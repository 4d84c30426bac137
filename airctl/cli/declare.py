"""How a command module declares its command: one decorator, one layout of ``--help``.

A command of airctl is a typer command that prints its result through the output protocol
(:func:`airctl.cli.shown.reports`: ``--json``), and a command that compiles takes the options every
mode honours (:func:`airctl.cli.target.every_mode_options`). Those are decorators that work only
stacked in one order under ``@app.command`` (the every-mode options replace a parameter of the
function ``reports`` returns). :func:`command` stacks them, so a module names its command once and
never the order. :func:`help_text` lays out what ``--help`` says above the options: what the
command does, then its examples, one command line each, as every command shows them. Nothing here
imports torch (``airctl --help`` builds every command).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from airctl.cli.named_run import named_run_options
from airctl.cli.shown import JSON_HELP, reports
from airctl.cli.target import every_mode_options


def help_text(what: str, *examples: str, then: str = "") -> str:
    """``--help``'s text: ``what`` (paragraphs, rich markup), the ``examples`` under a heading,
    each indented on a paragraph of its own, then ``then`` (what the exit codes mean, say)."""
    shown = "[bold]Examples[/bold]\n\n" + "".join(f"  {example}\n\n" for example in examples) if examples else ""
    return f"{what}\n\n{shown}{then}".rstrip("\n") + "\n"


def command(group: typer.Typer, name: str, help: str | None = None, *,  # noqa: A002 - typer's own name for it
            json: str | None = JSON_HELP, json_panel: str | None = None, modes_panel: str | None = None,
            **settings: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare ``name`` in ``group``: ``--json`` through :func:`reports` (``json``: what it prints;
    None: the command has no result to print); when the function takes ``every: EveryMode``, the
    every-mode options (in ``modes_panel`` of ``--help``); when it takes ``which: NamedRun``, RUN,
    ``--run`` and the folder of ledgers (:mod:`airctl.cli.named_run`). ``settings`` go to ``group.command``.
    Without ``help``, typer reads the function's docstring."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        wrapped = function if json is None else reports(json, panel=json_panel)(function)
        if _takes(function, "every", "EveryMode"):
            wrapped = every_mode_options(panel=modes_panel)(wrapped)
        elif "EveryMode" in str(function.__annotations__.get("every", "")):
            raise TypeError(f"command {name}: annotate `every` as EveryMode (not "
                            f"{function.__annotations__['every']!r}) for the options every mode honours")
        if _takes(function, "which", "NamedRun"):
            wrapped = named_run_options(wrapped)
        elif "which" in function.__annotations__:  # typer would quietly make it an option `--which`
            raise TypeError(f"command {name}: its parameter `which` is annotated "
                            f"{function.__annotations__['which']!r}; a run named on the command line is "
                            "`which: NamedRun = IN_OUT` (or IN_RUNS)")
        return group.command(name, help=help, **settings)(wrapped)

    return decorate


def _takes(function: Callable[..., Any], name: str, type_name: str) -> bool:
    """Whether ``function`` has a parameter ``name`` annotated with the type named, plainly or through its
    module (``EveryMode``, ``target.EveryMode``): the annotation is text in a module with ``from
    __future__ import annotations``, and the signature is not resolved for this."""
    annotation = function.__annotations__.get(name)
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text.rpartition(".")[2] == type_name
