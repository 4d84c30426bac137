"""Console helpers shared by commands: stdout for results, stderr for progress and errors.

Nothing here imports torch. ``--json`` commands print only JSON on stdout via :func:`print_json`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=_plain) + "\n")
    sys.stdout.flush()


def _plain(value: Any) -> Any:
    """JSON for what json cannot write: objects with ``to_json()`` (the run index), else their text."""
    to_json = getattr(value, "to_json", None)
    return to_json() if callable(to_json) else str(value)


def render_error(error: Exception) -> None:
    from rich.markup import escape

    from airctl.errors import AirctlError

    if isinstance(error, AirctlError):
        where = error.location
        prefix = f"{escape(where)}: " if where else ""
        node = f" [dim](node {escape(error.node)})[/dim]" if error.node else ""
        err.print(f"{prefix}[bold red]error:[/bold red] {escape(error.message)}{node}")
        if error.hint:
            err.print(f"[cyan]hint:[/cyan] {escape(error.hint)}")
    else:
        err.print(f"[bold red]error:[/bold red] {escape(str(error))}")
