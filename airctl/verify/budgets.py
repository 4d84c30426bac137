"""Streams and events of a run against the device's limits (rule ``stream_budget``, R16).

The public reports: vLLM-Ascend caps the number of graphs it captures at 1920 "because the device has
2048 streams" (vllm-ascend ``vllm_ascend/utils.py``, ``update_aclgraph_sizes``: 128 streams are kept
spare), and models "go wrong due to lack of npu streams" during graph capture when a plan adds streams
(vllm-ascend issues on aclgraph capture). Each captured graph holds its streams and events: every
stream a plan adds is multiplied by every captured size (npugraph_ex's and aclgraph's captures and
recaptures) and by every graph of the run.

The count, per graph (stage-independent, so ``check`` and the run's summary agree):

- streams: the capture stream plus each distinct side-stream label of its stream scopes;
- events: each ``record`` and each user tagged event (``tagged_event_record`` not ``created_inside``),
  plus, in the aclgraph modes, the closure events TorchAir and npugraph_ex add (a fork at the graph's
  start and a join per stream scope: reference/torchair.md §2.2), counted whether or not the stage
  read already holds them;
- captures: the run's ``captures`` rows of the graph that captured (capture or recapture), at least one.

The limits come from the device table (:mod:`airctl.devices`, ``max_streams``/``max_events``
with their sources); a limit the table has no figure for is not checked. Past :data:`WARN_FRACTION`
of a limit the finding is a warning (vllm-ascend's 1920 of 2048), past the limit an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from airctl.graph.model import Graph
from airctl.graph.roles import Role
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.plan import build_plan, node_args
from airctl.verify.rules import make_finding

WARN_FRACTION = 1920 / 2048  # vllm-ascend's capture cap against the device's streams


@dataclass(frozen=True)
class GraphBudget:
    streams: int  # per capture: the capture stream and each side stream
    events: int  # per capture
    first_scope: str | None  # the first side-stream scope_enter (where the graph's streams are added)


def graph_budget(graph: Graph, mode: Mode) -> GraphBudget:
    """What one capture of ``graph`` holds under ``mode``."""
    plan = build_plan(graph, mode)
    side = [s for s in plan.scopes if s.label is not None]
    records = tags = 0
    seen_tags: set[str] = set()
    for node, role in zip(plan.nodes, plan.roles, strict=True):
        if role is Role.RECORD:
            records += 1
        elif role is Role.TAGGED_RECORD:
            args = node_args(node)
            inside = (node.attrs.get("kwargs") or {}).get("created_inside") or (len(args) > 1 and args[1] is True)
            tag = str(args[0]) if args else node.name
            if not inside and tag not in seen_tags:
                seen_tags.add(tag)
                tags += 1
    closure = (1 + len(side)) if side and plan.mode.is_aclgraph else 0
    first = plan.nodes[side[0].enter].name if side else None
    return GraphBudget(1 + len({s.label for s in side}), records + tags + closure, first)


def device_limits(name: str | None = None) -> tuple[str, dict[str, int]]:
    """The device's name and the ``max_streams``/``max_events`` the table has figures for."""
    from airctl.devices import device

    dev = device(name)
    limits = {key: int(value) for key in ("max_streams", "max_events") if (value := getattr(dev, key, None))}
    return dev.name, limits


def budget_line(graphs: Mapping[str, Graph], captures: Mapping[str, int], mode: Mode,
                device: str | None = None) -> str | None:
    """What ``airctl show`` prints of the budget: the streams and events the run's captures hold, against
    the device; None for a run with no side stream."""
    budgets = {gid: graph_budget(g, mode) for gid, g in graphs.items()}
    if all(b.streams == 1 for b in budgets.values()):
        return None
    name, limits = device_limits(device)
    parts = []
    for key, what in (("max_streams", "streams"), ("max_events", "events")):
        total = sum(getattr(b, what) * max(1, captures.get(gid, 1)) for gid, b in budgets.items())
        limit = limits.get(key)
        parts.append(f"{total} {what}" + (f" of {limit}" if limit else ""))
    per = ", ".join(f"{gid}: {b.streams} x {max(1, captures.get(gid, 1))}" for gid, b in list(budgets.items())[:3])
    return f"stream budget ({name}): {' and '.join(parts)} held by the run's captures (streams x captures: {per})"


def budget_findings(graphs: Mapping[str, Graph], captures: Mapping[str, int], mode: Mode,
                    device: str | None = None) -> list[Finding]:
    """One finding per limit (streams, events) the run's captured graphs reach past the warning
    fraction; the nodes are the first side-stream scope of the graphs that add most."""
    mode = Mode.parse(mode).semantics
    budgets = {gid: graph_budget(g, mode) for gid, g in graphs.items()}
    name, limits = device_limits(device)
    found: list[Finding] = []
    for key, what in (("max_streams", "streams"), ("max_events", "events")):
        limit = limits.get(key)
        if not limit:
            continue
        use = {gid: getattr(b, what) * max(1, captures.get(gid, 1)) for gid, b in budgets.items()}
        total = sum(use.values())
        if total <= limit * WARN_FRACTION:
            continue
        severity = "error" if total > limit else "warning"
        worst = sorted(use, key=lambda g: -use[g])
        parts = "; ".join(f"graph {g}: {getattr(budgets[g], what)} {what} x {max(1, captures.get(g, 1))} "
                          f"capture(s) = {use[g]}" for g in worst[:4])
        nodes = [b for g in worst if (b := budgets[g].first_scope) is not None][:1]
        graph = graphs[worst[0]] if worst else None
        near = "more than" if total > limit else "close to"
        f = make_finding("stream_budget", mode,
                         f"the run's captured graphs hold {total} {what}, {near} "
                         f"the {limit} of {name} (device table; a warning past {WARN_FRACTION:.0%}): {parts}",
                         nodes, graph, severity=severity, hint=_hint(budgets, what, limit))
        if f is not None:
            f.graph = worst[0] if worst else None
            found.append(f)
    return found


def _hint(budgets: Mapping[str, GraphBudget], what: str, limit: int) -> str:
    """The rule's words and the capture limit that keeps every graph within the warning fraction."""
    per_capture = sum(getattr(b, what) for b in budgets.values()) or 1
    cap = max(1, int(limit * WARN_FRACTION) // per_capture)
    return (f"at most {cap} capture(s) per graph keep(s) the run under {int(limit * WARN_FRACTION)} {what}: "
            f"torch.compile(model, backend=\"npugraph_ex\", options={{\"capture_limit\": {cap}}}) "
            f"(airctl: --option capture_limit={cap}); or fewer graphs (fewer graph breaks), or fewer side "
            "streams per graph")
