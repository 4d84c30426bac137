"""The record/wait passes that close a stream plan's races, written as YAML a user could have written.

A race (rule ``race_cross_stream_without_wait``) names a producer P and a consumer C on another
stream with nothing ordering them. TorchAir's fix is always the same (reference/torchair.md §2.2):
a record after P on P's stream, and a wait on that record before C, on C's stream. This module
turns each race of the plan graph (the graph after the pass file's last pass) into those two
passes, with selectors a person would write — ``source:`` line and op, or ``module:`` path, with
``each:`` over repeated layers (``model.layers.*``), node names only when nothing else selects
exactly — and waits on a scope's own record (``stream_scope`` with ``record: true``) when the
producer is inside one. Every selector is checked against the plan graph with the pass runner's
own matching (:mod:`airctl.passes.select`): a wait's groups must start exactly at the consumers,
a record's groups end exactly at the producers.

>>> from airctl.graph.model import Graph, Node
>>> g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder"),
...     Node("mm", "aten.mm.default", ["x", "x"], stream="s1", source="/w/m.py:8", kind="call_function"),
...     Node("add", "aten.add.Tensor", ["mm", "x"], source="/w/m.py:9", kind="call_function")])
>>> plan = plan_fix({"g": g}, [("g", "mm", "add", "reduce-overhead")], names=set(), stage="pre")
>>> [(p.name, p.kind, p.fields) for p in plan.passes]  # doctest: +NORMALIZE_WHITESPACE
[('mm-ready', 'record', {'after': {'source': 'm.py:8', 'target': 'aten.mm.default'}}),
 ('add-waits-for-mm', 'wait', {'before': {'source': 'm.py:9', 'target': 'aten.add.Tensor'}, 'on': 'mm-ready'})]
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from airctl.graph.model import Graph, Node, is_stream_op, split_source, stream_word
from airctl.graph.names import free_name
from airctl.io.paths import package_relative
from airctl.modes import Mode
from airctl.passes.select import NodeInfo, every_overload, groups, select
from airctl.passes.spec import _selector


@dataclass
class FixPass:
    """One pass the fix adds: its YAML fields, and the races it closes (``graph: C reads P``)."""

    name: str
    kind: str  # record | wait
    fields: dict[str, Any]
    closes: list[str] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, **self.fields, "closes": self.closes, "modes": self.modes}

    def yaml(self, indent: str, stage: str) -> str:
        """The pass as a YAML list item, a comment above it saying what it closes."""
        shown = self.closes[:3] + ([f"{len(self.closes) - 3} more"] if len(self.closes) > 3 else [])
        lines = [f"{indent}# airctl passes fix: closes {len(self.closes)} race(s) in {', '.join(self.modes)}: "
                 + "; ".join(shown)] if self.kind == "wait" else []
        lines += [f"{indent}- name: {self.name}", f"{indent}  kind: {self.kind}"]
        if stage != "pre":
            lines.append(f"{indent}  stage: {stage}")
        for key, value in self.fields.items():
            lines.append(f"{indent}  {key}: {_flow(value)}")
        return "\n".join(lines)


@dataclass
class FixPlan:
    passes: list[FixPass] = field(default_factory=list)
    unclosed: list[str] = field(default_factory=list)  # races no selector could reach

    def yaml(self, indent: str = "  ", stage: str = "pre") -> str:
        return "\n".join(p.yaml(indent, stage) for p in self.passes)


def _flow(value: Any) -> str:
    """A YAML flow value: ``{source: "m.py:9", target: aten.add.Tensor}``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z_][\w.\-]*", value) and value not in ("true", "false"):
        return value
    return json.dumps(value)


def short_source(source: str | None) -> str | None:
    """A node's ``file:line`` as a ``source:`` selector writes it: an installed library's file
    relative to its package root, the user's by its file name (the selector matches a path suffix)."""
    if not source:
        return None
    path, _, line = source.rpartition(":")
    library = package_relative(path)
    return f"{library or path.rsplit('/', 1)[-1]}:{line}"


def _infos(graph: Graph) -> list[NodeInfo]:
    infos = []
    for i, n in enumerate(graph.nodes):
        path, line = split_source(n.source)
        frames = [(path, line)] if path is not None and line is not None else []
        infos.append(NodeInfo(None, n.name, n.op if n.kind not in ("placeholder", "output") else n.kind,
                              n.kind, i, frames, n.module))
    return infos


def _layered(module: str | None) -> tuple[str | None, str | bool]:
    """``model.layers.0.mlp`` -> (``model.layers.*.mlp``, ``model.layers.*``): the module as a glob
    over repeated layers, and the ``each:`` that makes one group per layer.

    >>> _layered("model.layers.0.mlp"), _layered("norm"), _layered(None)
    (('model.layers.*.mlp', 'model.layers.*'), ('norm', True), (None, True))
    """
    if not module:
        return None, True
    parts = ["*" if p.isdigit() else p for p in module.split(".")]
    first = next((k for k, p in enumerate(parts) if p == "*"), None)
    return ".".join(parts), True if first is None else ".".join(parts[: first + 1])


def _candidates(nodes: list[Node]) -> list[tuple[dict[str, Any], str | bool]]:
    """Selectors for ``nodes`` (one per layer, same op and line), most readable first, with ``each``."""
    first = nodes[0]
    glob, each = _layered(first.module)
    src = short_source(first.source)
    found: list[tuple[dict[str, Any], str | bool]] = []
    if src:
        found.append(({"source": src, "target": first.op}, each))
        if glob:
            found.append(({"source": src, "target": first.op, "module": glob + "$"}, each))
    if glob:
        found.append(({"module": glob + "$", "target": first.op}, each))
    names = "|".join(re.escape(n.name) for n in nodes)
    found.append(({"name": names}, True))
    return found


class _ByOp:
    """A plan graph's nodes as selectors read them, and the same by op. A candidate selector names one
    whole op (``aten.view.default``), which only that op's nodes can match (unless it names every
    overload: :func:`~airctl.passes.select.every_overload`): tried for each candidate and each group
    of races against every node, the search grew with the square of a model's layers."""

    def __init__(self, infos: list[NodeInfo]) -> None:
        self.infos = infos
        self.by_op: dict[str, list[NodeInfo]] = {}
        for info in infos:
            self.by_op.setdefault(info.op, []).append(info)

    def for_target(self, target: Any) -> list[NodeInfo]:
        """The nodes a selector with this ``target`` field can match, in graph order."""
        if isinstance(target, str) and not every_overload(target):
            return self.by_op.get(target, [])
        return self.infos


def _selects(sel: dict[str, Any], each: str | bool, nodes: _ByOp, want: set[str], end: str,
             exact: bool = True) -> bool:
    """Whether the selector's groups start (``end="first"``) or end (``"last"``) exactly at ``want``
    (with ``exact=False``: at least there — a hint's one race stands for its siblings in other layers)."""
    try:
        selector = _selector(sel)
        picked = groups(select(selector, nodes.for_target(sel.get("target"))), selector, each)
    except Exception:
        return False
    ends = {(g[0] if end == "first" else g[-1]).name for g in picked}
    return ends == want if exact else want <= ends


def _selector_for(pairs: list[tuple[str, Node]], infos_by_graph: dict[str, _ByOp], end: str,
                  exact: bool) -> tuple[Node, dict[str, Any], dict[str, set[str]]] | None:
    """One side of a group of races, as (graph id, node) pairs: the consumers (a wait's groups start at
    them, ``end="first"``) or the producers (a record's groups end there, ``"last"``). Returns the first
    of those nodes, the pass's fields that select them (``before``/``after``, and ``each`` where it
    groups) and their names by graph; None when no selector reaches them."""
    nodes = list({(g, n.name): n for g, n in pairs}.values())
    want: dict[str, set[str]] = {}
    for g, n in pairs:
        want.setdefault(g, set()).add(n.name)
    for sel, each in _candidates(nodes):
        # exact: without `each:` when one group does; a hint: over every layer when it can
        for option in dict.fromkeys((False, each) if exact else (each, False)):
            if all(_selects(sel, option, infos_by_graph[g], names, end, exact) for g, names in want.items()):
                fields: dict[str, Any] = {"before" if end == "first" else "after": sel}
                return nodes[0], fields if option is False else {**fields, "each": option}, want
    return None


def _signature(node: Node) -> tuple[str, str | None, str | None]:
    return node.op, _layered(node.module)[0], short_source(node.source)


def _slug(node: Node) -> str:
    """A readable name stem: the op, after the innermost named module (``mlp-addmm``; ``add`` at a layer)."""
    parts = (node.module or "").split(".")
    owner = "" if not parts[-1] or parts[-1].isdigit() else parts[-1]
    op = node.op.split(".")[1] if node.op.count(".") >= 1 else node.name
    return re.sub(r"[^A-Za-z0-9]+", "-", f"{owner}-{op}").strip("-").lower() or "node"


class _Records:
    """A plan graph's nodes by position, and the record ops the pass file's passes put in it: found
    once per graph, as every race of a plan (hundreds on a deep model) asks the same question."""

    def __init__(self, graph: Graph) -> None:
        self.position = {n.name: i for i, n in enumerate(graph.nodes)}
        self.records = [(i, n) for i, n in enumerate(graph.nodes)
                        if n.meta.get("pass") and is_stream_op(n.op, "record")]

    def scope_record(self, producer: Node, consumer: Node) -> str | None:
        """The pass whose record (a scope's own, or a record pass) is the latest of that pass before
        ``consumer``, on ``producer``'s stream and after it: a wait on it orders ``consumer`` after ``producer``."""
        before, after = self.position[consumer.name], self.position[producer.name]
        latest: dict[str, tuple[int, Node]] = {}
        for i, n in self.records:
            if i >= before:
                break
            latest[n.meta["pass"]] = (i, n)
        for made, (i, record) in latest.items():
            if record.stream == producer.stream and i > after:
                return made
        return None


def plan_fix(graphs: dict[str, Graph], races: list[tuple[str, str, str, Mode]], *, names: set[str],
             stage: str, exact: bool = True) -> FixPlan:
    """The passes closing ``races`` (graph id, producer, consumer, mode) of the plan ``graphs``;
    ``names``: the pass names the user's file already uses; ``exact=False`` (a hint for one race):
    selectors may also reach the same line in other layers."""
    plan = FixPlan()
    infos = {gid: _ByOp(_infos(g)) for gid, g in graphs.items()}
    by_name = {gid: {n.name: n for n in g.nodes} for gid, g in graphs.items()}
    recorded = {gid: _Records(g) for gid, g in graphs.items()}
    grouped: dict[Any, list[tuple[str, Node, Node, Mode]]] = {}
    for gid, first, second, mode in races:
        p, c = by_name[gid].get(first), by_name[gid].get(second)
        if p is None or c is None:
            plan.unclosed.append(f"{gid}: {second} reads {first} (node not in the plan graph)")
            continue
        on = recorded[gid].scope_record(p, c)
        grouped.setdefault((_signature(c), on or _signature(p)), []).append((gid, p, c, mode))
    used = set(names)
    records: dict[Any, str] = {}
    for (_, producer_key), rows in grouped.items():
        closes = list(dict.fromkeys(f"{g}: {c.name} reads {p.name}" for g, p, c, _ in rows))
        wait = _selector_for([(g, c) for g, _, c, _ in rows], infos, "first", exact)
        if wait is None:
            plan.unclosed.extend(closes)
            continue
        consumer, fields, want_c = wait
        on = producer_key if isinstance(producer_key, str) else records.get(producer_key)
        if on is None:
            record = _selector_for([(g, p) for g, p, _, _ in rows], infos, "last", exact)
            if record is None:
                plan.unclosed.extend(closes)
                continue
            producer, after, want_p = record
            on = free_name(f"{_slug(producer)}-ready", used, sep="-", first=2)
            plan.passes.append(FixPass(on, "record", {**after, **_only_graphs(want_p, graphs)}))
            records[producer_key] = on
        fields = {**fields, "on": on, **_only_graphs(want_c, graphs)}
        modes = sorted({str(m) for *_, m in rows})  # the modes' values, as the YAML and JSON write them
        name = free_name(f"{_slug(consumer)}-waits-for-{on.removesuffix('-ready')}", used, sep="-", first=2)
        plan.passes.append(FixPass(name, "wait", fields, closes=closes, modes=modes))
    return plan


def _only_graphs(want: dict[str, set[str]], graphs: dict[str, Graph]) -> dict[str, Any]:
    """``graphs: [forward]`` when the races are in some AOT graph kinds only (ledger ids ``1-forward``):
    a wait in a graph without the scope's record would find no record to wait on and fail."""
    kind = {gid: gid.split("-", 1)[-1] for gid in graphs}
    racing, every = sorted({kind[g] for g in want}), sorted(set(kind.values()))
    known = {"inference", "forward", "backward"}
    return {"graphs": racing} if racing != every and set(racing) <= known else {}


def wait_hint(graph: Graph, producer: str, consumer: str, *, yaml: bool = True) -> str:
    """A race's hint: where the wait goes (the consumer, on its stream) and, with ``yaml``, the
    passes that put it there, ready to paste into the pass file's ``passes:`` list."""
    c = graph.get(consumer)
    p = graph.get(producer)
    where = f" ({short_source(c.source)})" if c is not None and c.source else ""
    stream = stream_word(c.stream if c is not None else None)
    text = (f"the wait goes before {consumer}{where}, the consumer on {stream}, on a record after {producer}; "
            "`airctl passes fix` writes it into a copy of the pass file and checks every mode")
    if not yaml or c is None or p is None:
        return text
    plan = plan_fix({"g": graph}, [("g", producer, consumer, "")], names=set(), stage="pre", exact=False)
    if not plan.passes:
        return text
    for fix in plan.passes:
        fix.modes, fix.closes = [], []
    snippet = "\n".join("\n".join(line for line in fix.yaml("  ", "pre").splitlines() if not line.lstrip()
                                  .startswith("#")) for fix in plan.passes)
    return f"{text}:\n{snippet}"
