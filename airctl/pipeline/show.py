"""``airctl show --node`` / ``--assignment`` / ``--kernels`` / ``--phases`` / ``--options``: one run's
answers to "where does this come from", "where did each node go", "which lines spent the device's
kernel time", "where did the time go" and "which options took effect", read from its ledger (and,
for ``--kernels``, a profiler folder).

The chain is :mod:`airctl.diff.chain` (with the run's profile, :mod:`airctl.diff.chain_tasks`), the
assignment :mod:`airctl.diff.assignment`, the kernel map :mod:`airctl.diff.chain_kernels`, the phase
table :mod:`airctl.ledger.phases`, the options :mod:`airctl.ledger.options_applied`.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.ledger.reader import Ledger


def node_chains(root: Path, name: str) -> dict[str, Any]:
    """``{"run", "query", "profile", "chains": [...]}``: every graph's chain for ``name``; an unknown
    name is an error (exit 2) naming the closest names the run has."""
    from airctl.diff.chain import chains
    from airctl.diff.chain_tasks import tasks_of

    led = Ledger.open(root)
    tasks = tasks_of(root)
    found = chains(led, name, tasks)
    if not found:
        raise AirctlError(f"no FX node, Dynamo node, GE op or profiled task named {name!r} in the run",
                          file=str(led.index_path), hint=_closest(led, name, tasks))
    return {"run": led.index.run_id, "query": name, "profile": tasks["file"] if tasks else None,
            "chains": [c.to_json() for c in found]}


def _closest(led: Ledger, name: str, tasks: dict[str, Any] | None) -> str:
    names: set[str] = set(tasks["by_task"]) if tasks else set()
    seen: set[str] = set()
    for stage in led.stages():
        if stage.file not in seen:
            seen.add(stage.file)
            names.update(n.name for n in led.load(stage).nodes)
    close = difflib.get_close_matches(name, sorted(names), n=5)
    if close:
        return "names like it: " + ", ".join(close)
    return "`airctl dump --stage fx-final --type txt` lists the nodes"


def assignment(root: Path) -> dict[str, Any]:
    """Where each node of each graph's final FX stage went (:func:`airctl.diff.assignment.assignment_table`)."""
    from airctl.diff.assignment import assignment_table

    return assignment_table(Ledger.open(root))


def kernels(root: Path, folder: Path) -> dict[str, Any]:
    """The device kernel time of torch_npu profiler folder ``folder`` (every rank) mapped to source lines
    through the run's chains (:func:`airctl.diff.chain_kernels.kernel_map`)."""
    from airctl.diff.chain_kernels import kernel_map
    from airctl.profile.analyze import analyze

    led = Ledger.open(root)
    tasks = [{"task": e.node, "type": e.op, "stream": e.stream, "us": (e.end_s - e.start_s) * 1e6, "kind": e.kind,
              "step": (rank, e.step)} for rank, t in enumerate(analyze(Path(folder)).timelines) for e in t.events]
    return {"run": led.index.run_id, "profile": str(folder), **kernel_map(tasks, led)}


def phases(root: Path) -> dict[str, Any]:
    """The run's phase table (:func:`airctl.ledger.phases.phase_table`)."""
    from airctl.ledger.phases import phase_table

    return phase_table(Ledger.open(root).index)


def options(root: Path) -> dict[str, Any]:
    """The run's options, requested and applied (:func:`airctl.ledger.options_applied.options_table`)."""
    from airctl.ledger.options_applied import options_table

    return options_table(Ledger.open(root))
