"""What typer reads of a command, rewritten by a decorator: its parameters, with their annotations.

typer builds a command's options from ``inspect.signature`` of the function it is given. The
decorators that add options to many commands at once (:func:`airctl.cli.target.every_mode_options`,
:func:`airctl.cli.shown.reports`) wrap the command and hand typer a signature of their own: the
command's parameters (annotations resolved, since the modules use ``from __future__ import
annotations``) with some replaced or added. This module is that one step.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any


def parameters(command: Callable[..., Any]) -> list[inspect.Parameter]:
    """``command``'s parameters as typer will read them: annotations as types, not strings."""
    hints = typing.get_type_hints(command)
    return [p.replace(annotation=hints.get(p.name, p.annotation))
            for p in inspect.signature(command).parameters.values()]


def with_parameters(wrapper: Callable[..., Any], command: Callable[..., Any], *,
                    added: dict[str, tuple[Any, Any]] | None = None,
                    replaced: dict[str, Callable[[inspect.Parameter], list[inspect.Parameter]]] | None = None,
                    ) -> Callable[..., Any]:
    """``wrapper``, which typer reads as taking ``command``'s parameters, with each named in ``replaced``
    replaced by what its function makes of it, and ``added`` (name: (annotation, default)) after them;
    a name that comes out twice is a ``TypeError`` naming ``command``."""
    params: list[inspect.Parameter] = []
    for param in parameters(command):
        replace = (replaced or {}).get(param.name)
        params += replace(param) if replace is not None else [param]
    kind = inspect.Parameter.KEYWORD_ONLY if params and params[-1].kind == params[-1].KEYWORD_ONLY else \
        inspect.Parameter.POSITIONAL_OR_KEYWORD
    params += [inspect.Parameter(name, kind, default=default, annotation=annotation)
               for name, (annotation, default) in (added or {}).items()]
    names = [p.name for p in params]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:  # inspect's own error would not say whose, nor why
        raise TypeError(f"{command.__name__}: its parameters {clash} are the names a decorator gives it")
    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # what typer reads
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper
