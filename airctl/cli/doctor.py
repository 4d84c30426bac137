"""``airctl doctor``: what is installed, which backend ``auto`` picks and why, what to install.

Never imports torch: versions come from package metadata, CANN from loading its libraries.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import platform
import shutil
import subprocess
from typing import Any

import typer


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _dot_version() -> str | None:
    dot = shutil.which("dot")
    if dot is None:
        return None
    try:
        proc = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (proc.stderr or proc.stdout).strip()


def diagnose() -> dict[str, Any]:
    from airctl import __version__
    from airctl.backends import choose
    from airctl.errors import AirctlError
    from airctl.torch_env import AUTOLOAD_VAR, cann_status

    cann = cann_status()
    torch_npu = _version("torch-npu") or _version("torch_npu")
    torchair_path = None
    if torch_npu:
        from airctl.sim.torchair_loader import torch_npu_root

        root = torch_npu_root()
        if root is not None and (root / "dynamo" / "torchair" / "__init__.py").is_file():
            torchair_path = str(root / "dynamo" / "torchair")
    try:
        choice = choose("auto")
        backend = {"name": choice.name, "reason": choice.reason}
    except AirctlError as e:
        backend = {"name": None, "reason": e.message}
    advice = []
    if _version("torch") is None:
        advice.append("pip install torch==2.13.0   (CPU wheel; an unpinned torch pulls a multi-GB CUDA build)")
    if torch_npu is None:
        advice.append("pip install torch-npu==2.13.0   (TorchAir ships inside it; the sim backend runs it)")
    if _dot_version() is None:
        advice.append("apt-get install graphviz   (the `dot` binary renders small graphs)")
    if not cann.available:
        advice.append("for the npu backend: install CANN and `source .../ascend-toolkit/set_env.sh`; "
                      "until then airctl uses the sim backend")
    return {
        "airctl": __version__,
        "python": platform.python_version(),
        "torch": _version("torch"),
        "torch_npu": torch_npu,
        "torchair": {"bundled_in_torch_npu": torch_npu, "path": torchair_path},
        "cann": {"available": cann.available, "reason": cann.reason, "home": cann.home},
        "graphviz": {"python": _version("graphviz"), "dot": _dot_version()},
        "chromium": shutil.which("chromium") or shutil.which("chromium-browser"),
        "env": {AUTOLOAD_VAR: os.environ.get(AUTOLOAD_VAR)},
        "backend_auto": backend,
        "advice": advice,
    }


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(as_json: bool = typer.Option(False, "--json", help="Print the diagnosis as JSON.")) -> None:
        """Show versions (python, torch, torch_npu, TorchAir, CANN, graphviz), which backend `auto` picks and why."""
        from rich.markup import escape
        from rich.table import Table

        from airctl.cli.output import out, print_json

        data = diagnose()
        if as_json:
            print_json(data)
            return
        table = Table(show_header=False, show_edge=False, pad_edge=False)
        table.add_column(style="bold")
        table.add_column()
        missing = "[red]missing[/red]"
        table.add_row("airctl", data["airctl"])
        table.add_row("python", data["python"])
        table.add_row("torch", data["torch"] or missing)
        table.add_row("torch_npu", data["torch_npu"] or missing)
        ta = data["torchair"]
        table.add_row("torchair", f"bundled in torch-npu {ta['bundled_in_torch_npu']} at {escape(ta['path'])}"
                      if ta["path"] else missing)
        cann = data["cann"]
        table.add_row("CANN", ("[green]available[/green] " if cann["available"] else "[yellow]not available[/yellow] ")
                      + escape(cann["reason"]))
        gv = data["graphviz"]
        table.add_row("graphviz", f"python {gv['python'] or 'missing'}, dot: {escape(gv['dot'] or 'missing')}")
        table.add_row("chromium", escape(data["chromium"] or "missing (only the report tests need it)"))
        auto = data["backend_auto"]
        table.add_row("backend auto", f"[bold]{auto['name']}[/bold] — {escape(auto['reason'])}")
        var = next(iter(data["env"]))
        table.add_row(var, str(data["env"][var]) + " (airctl sets 0 for itself and the scripts it runs when "
                      "torch-npu is installed without CANN)")
        out.print(table)
        for line in data["advice"]:
            out.print(f"[cyan]to do:[/cyan] {escape(line)}")
