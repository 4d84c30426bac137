"""What ``airctl bisect`` reads back from a step's ledger: TorchAir's passes, a pass's units, a culprit's diff.

Each step leaves an ordinary ledger; the next level of the bisection is planned from it:

- :func:`torchair_passes`: TorchAir's own passes the run went through, in order, each with how it
  can be switched off (:func:`airctl.hooks.pass_switch.switch`);
- :func:`units_of`: the units (``placements``) a YAML pass placed, from its ``yaml:<name>`` stage;
- :func:`culprit_facts`: the culprit pass's stage — the nodes it touched, the units it kept, and
  the rename-proof diff against the stage before it (:func:`airctl.passes.textdiff.unified`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airctl.graph.model import Graph
from airctl.hooks.pass_switch import HOOKS, Switch, switch
from airctl.io.json_io import read_json
from airctl.ledger.index import StageRef
from airctl.ledger.reader import Ledger


def _pass_of(stage: str) -> tuple[str, str] | None:
    """``after:view_to_reshape`` -> (``view_to_reshape``, ``fx``); ``ge:after:x`` -> (``x``, ``ge``); else None."""
    if stage.startswith("ge:after:"):
        return stage[len("ge:after:"):], "ge"
    if stage.startswith("after:") and not stage.startswith("after:yaml:"):
        name = stage[len("after:"):]
        return (name, "fx") if name not in HOOKS else None
    return None


def torchair_passes(ledger: Path) -> list[Switch]:
    seen: dict[str, Switch] = {}
    for ref in Ledger.open(ledger).index.stages():
        found = _pass_of(ref.name)
        if found is not None and found[0] not in seen:
            seen[found[0]] = switch(*found)
    return list(seen.values())


def units_of(ledger: Path, yaml_pass: str) -> list[dict[str, Any]]:
    """The units of ``yaml:<yaml_pass>``: the longest list over the graphs it ran on."""
    lists = [ref.entry.placements or [] for ref in Ledger.open(ledger).index.stages()
             if ref.name == f"yaml:{yaml_pass}"]
    return max(lists, key=len, default=[])


def _graph(ledger: Path, ref: StageRef) -> Graph:
    return read_json(ledger / ref.file)


def touched(before: Graph, after: Graph) -> list[str]:
    """Nodes of ``after`` that are new or whose op or inputs changed, then the names ``before`` lost."""
    old = {n.name: n for n in before.nodes}
    names = {n.name for n in after.nodes}
    out = [n.name for n in after.nodes
           if n.name not in old or (old[n.name].op, old[n.name].inputs) != (n.op, n.inputs)]
    return out + [n.name for n in before.nodes if n.name not in names]


def culprit_facts(ledger: Path, stage_pass: str, is_yaml: bool) -> dict[str, Any]:
    """``{"stage", "nodes", "placements", "diff"}`` of the culprit pass's stage in ``ledger`` (its first graph)."""
    from airctl.passes.textdiff import unified

    refs = Ledger.open(ledger).index.stages()
    names = (stage_pass,) if is_yaml else (f"after:{stage_pass}", f"ge:after:{stage_pass}")
    where = next((i for i, r in enumerate(refs) if r.name in names), None)
    if where is None:
        return {"stage": None, "nodes": [], "placements": [], "diff": ""}
    ref = refs[where]
    prev = refs[where - 1] if where > 0 and refs[where - 1].graph_id == ref.graph_id else None
    before, after = (_graph(ledger, prev) if prev else None), _graph(ledger, ref)
    units = ref.entry.placements or []
    kept = ref.entry.applied_placements
    chosen = [{"index": i, **u} for i, u in enumerate(units) if kept is None or i in kept]
    if chosen:
        nodes = list(dict.fromkeys(n for u in chosen for n in u.get("nodes", [])))
    else:
        nodes = touched(before, after) if before is not None else []
    diff = unified(before, after, prev.name, ref.name) if before is not None and prev is not None else ""
    return {"stage": f"{ref.graph_id}/{ref.name}", "nodes": nodes, "placements": chosen, "diff": diff}
