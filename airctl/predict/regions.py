"""The regions of a graph that a stream plan can move, found the way a pass file will select them.

``airctl passes suggest`` only proposes what a user could write by hand: a ``stream_scope`` wraps
the span from the first to the last node its selector matches, so a *region* here is exactly such
a span, and it is computed with the pass engine's own selector functions
(:mod:`airctl.passes.select`) on the graph the pre-stage passes see — what is found is what the
written file selects, never a guess about it.

Candidates, each a :class:`Region` (a family of spans, one per group):

- every module path prefix, its numeric components before the last one globbed
  (``layers.0.attn.k_proj`` → ``layers.*.attn.k_proj``: one scope per layer with ``each: true``;
  ``experts.0`` stays itself, so that two experts can go to different streams);
- per collective kind, each collective with its ``wait_tensor`` (``collective: all_reduce``, ``each``);
- for code outside any module (module ``None``), the nodes of each source line, selected by name:
  a snapshot keeps only a node's innermost frame, and a ``source:`` selector matches every frame, so
  for code that calls into submodules only names are known to select exactly.

A region is *kept out* of the search, with the reason said, when its groups' spans overlap (a scope
per group would nest, R10), when it holds no kernel, or when nothing can run beside it: every kernel
outside its span depends on one inside or the other way round (ancestor/descendant sets as bit
masks). Two regions *conflict* when their spans intersect: only one of them can be a scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from airctl.graph.model import Graph, Node
from airctl.graph.roles import collective_kind, is_collective_wait
from airctl.passes.select import NodeInfo, groups, select
from airctl.passes.spec import Selector
from airctl.predict.plan import KERNEL, ReplayPlan
from airctl.predict.selectors import file_line, module_pattern

INPUT_KINDS = ("placeholder", "get_attr")


@dataclass
class Dag:
    """The graph's data dependencies by position, and what each position may run beside."""

    graph: Graph
    infos: list[NodeInfo]
    preds: list[list[int]]
    succs: list[list[int]]
    inputs: frozenset[int]  # placeholders and constants: ready when the graph starts
    outputs: frozenset[int]
    anc: list[int]  # bit masks of ancestors
    desc: list[int]  # bit masks of descendants
    kernels: int  # bit mask of the kernel tasks


@dataclass
class Region:
    key: str  # "module layers.*.mlp" or "line model.py:12"
    selector: dict[str, Any]  # the YAML selector of its scope
    each: bool | str
    spans: list[tuple[int, int]]  # (first, last) position per group
    labels: list[str]  # per group: the module it is, or the line
    reason: str | None = None  # why it stays on the main stream (None: a candidate)
    work_us: float = 0.0  # kernel time inside its spans
    beside_us: float = 0.0  # kernel time outside that could run beside it
    mask: int = field(default=0, repr=False)  # positions inside its spans


def node_infos_of(graph: Graph) -> list[NodeInfo]:
    """What the selector engine sees of each node of a graph snapshot (its innermost frame only)."""
    infos = []
    for i, n in enumerate(graph.nodes):
        frames = []
        if n.source and ":" in n.source:
            path, _, line = n.source.rpartition(":")
            if line.isdigit():
                frames = [(path, int(line))]
        op = n.op if n.kind not in INPUT_KINDS + ("output",) else n.kind
        infos.append(NodeInfo(None, n.name, op, n.kind, i, frames, n.module))
    return infos


def dag_of(graph: Graph, plan: ReplayPlan) -> Dag:
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    preds: list[list[int]] = []
    for i, n in enumerate(graph.nodes):
        ps = {index[p] for p in (Node.producer(r) for r in n.inputs if r) if p in index and index[p] < i}
        preds.append(sorted(ps))
    succs: list[list[int]] = [[] for _ in graph.nodes]
    for i, ps in enumerate(preds):
        for p in ps:
            succs[p].append(i)
    anc = [0] * len(preds)
    for i, ps in enumerate(preds):
        for p in ps:
            anc[i] |= anc[p] | (1 << p)
    desc = [0] * len(preds)
    for i in range(len(preds) - 1, -1, -1):
        for s in succs[i]:
            desc[i] |= desc[s] | (1 << s)
    kernels = sum(1 << t.index for t in plan.tasks if t.kind == KERNEL)
    inputs = frozenset(i for i, n in enumerate(graph.nodes) if n.kind in INPUT_KINDS)
    outputs = frozenset(i for i, n in enumerate(graph.nodes) if n.kind == "output")
    return Dag(graph, node_infos_of(graph), preds, succs, inputs, outputs, anc, desc, kernels)


def _candidates(dag: Dag) -> list[Region]:
    patterns: dict[str, None] = {}
    lines: dict[str, list[int]] = {}
    for info in dag.infos:
        if info.kind in INPUT_KINDS or info.kind == "output":
            continue
        if info.module:
            parts = info.module.split(".")
            for k in range(1, len(parts) + 1):
                patterns.setdefault(module_pattern(".".join(parts[:k])), None)
        elif info.source:
            lines.setdefault(info.source, []).append(info.position)
    out: list[Region] = []
    for pattern in patterns:
        sel = Selector(module=pattern)
        found = select(sel, dag.infos)
        each: bool | str = "*" in pattern
        gs = groups(found, sel, each) if found else []
        if len(gs) <= 1:
            each = False
        out.append(Region(f"module {pattern}", {"module": pattern}, each, [(g[0].position, g[-1].position) for g in gs],
                          [_group_label(g, pattern) for g in gs]))
    out += _collectives(dag)
    for source, positions in lines.items():
        names = [dag.infos[i].name for i in positions]
        out.append(Region(f"line {file_line(source)}", {"name": "|".join(re.escape(n) for n in names)}, False,
                          [(positions[0], positions[-1])], [file_line(source)]))
    return out


def _collectives(dag: Dag) -> list[Region]:
    """Per collective kind, one region: each collective with the ``wait_tensor`` that waits for it
    (what ``select: {collective: KIND}`` with ``each: true`` groups, docs/passes.md "Collectives")."""
    kinds: dict[str, list[int]] = {}
    for info in dag.infos:
        kind = collective_kind(info.op)
        if kind is not None:
            kinds.setdefault(kind, []).append(info.position)
    out = []
    for kind, positions in kinds.items():
        spans = [(p, max([p, *(c for c in dag.succs[p] if is_collective_wait(dag.infos[c].op))])) for p in positions]
        out.append(Region(f"collective {kind}", {"collective": kind}, True, spans,
                          [dag.infos[p].name for p in positions]))
    return out


def _group_label(group: list[NodeInfo], pattern: str) -> str:
    """The module a group is: its first node's module, cut to the pattern's depth."""
    parts = (group[0].module or "").split(".")
    return ".".join(parts[: len(pattern.split("."))]) or pattern


def find_regions(dag: Dag, durations_us: list[float]) -> list[Region]:
    """Every candidate region, with a reason on those that cannot gain anything as a scope."""
    found: list[Region] = []
    seen: dict[tuple[tuple[int, int], ...], Region] = {}
    for r in _candidates(dag):
        key = tuple(r.spans)
        if key in seen:  # the same spans as a shorter selector: that one is written
            continue
        seen[key] = r
        found.append(_judge(r, dag, durations_us))
    return found


def _judge(r: Region, dag: Dag, durations_us: list[float]) -> Region:
    """Its mask, work and what could run beside it; a reason when it cannot gain anything."""
    all_kernels = dag.kernels
    r.mask = sum(1 << i for a, b in r.spans for i in range(a, b + 1))
    inside = r.mask & all_kernels
    r.work_us = _us(inside, durations_us)
    if not r.spans:
        r.reason = "its selector matches nothing"
    elif any(b0 <= a1 for (_, a1), (b0, _) in zip(r.spans, r.spans[1:], strict=False)):
        r.reason = "its groups' spans overlap: one scope per group would nest (R10)"
    elif not inside:
        r.reason = "no kernel in it: nothing to move"
    elif inside == all_kernels:
        r.reason = "it holds every kernel"
    else:
        beside = 0
        for a, b in r.spans:
            span = sum(1 << i for i in range(a, b + 1))
            for i in range(a, b + 1):
                if all_kernels >> i & 1:
                    beside |= all_kernels & ~dag.anc[i] & ~dag.desc[i] & ~span
        r.beside_us = _us(beside, durations_us)
        if not beside:
            r.reason = "nothing can run beside it: every other kernel depends on it or it on them"
        elif r.beside_us <= 0.0 or r.work_us <= 0.0:
            r.reason = "what could run beside it takes no time"
    return r


def coarsen(dag: Dag, regions: list[Region], durations_us: list[float]) -> list[Region]:
    """Coarser regions for numbered siblings (``blocks.0`` … ``blocks.199``): one per ten of them
    (``blocks.?``, ``blocks.1?``, …, ``blocks.19?``: fnmatch patterns a module selector takes),
    each a single scope over its siblings' span. The siblings are left out with the reason said;
    the new regions are returned, not added."""
    families: dict[str, list[Region]] = {}
    for r in regions:
        module = r.selector.get("module") if r.reason is None else None
        parent, _, last = (module or "").rpartition(".")
        if module and last.isdigit() and "*" not in module and len(r.spans) == 1:
            families.setdefault(parent, []).append(r)
    out: list[Region] = []
    for parent, members in families.items():
        if len(members) <= 10:
            continue
        decades: dict[str, list[Region]] = {}
        for r in members:
            last = r.selector["module"].rpartition(".")[2]
            decades.setdefault(f"{parent}.{last[:-1]}?", []).append(r)
        for pattern, siblings in decades.items():
            sel = Selector(module=pattern)
            found = select(sel, dag.infos)
            if not found or len(siblings) < 2:
                continue
            coarse = _judge(Region(f"module {pattern}", {"module": pattern}, False,
                                   [(found[0].position, found[-1].position)], [pattern]), dag, durations_us)
            if coarse.reason is None:
                out.append(coarse)
                for r in siblings:
                    r.reason = f"searched as part of module {pattern} (too many regions to search one by one)"
    return out


def _us(mask: int, durations_us: list[float]) -> float:
    return sum((durations_us[i] for i in range(mask.bit_length()) if mask >> i & 1), 0.0)


def conflicts(regions: list[Region]) -> list[int]:
    """Per region, a bit mask of the regions whose spans intersect its own."""
    out = [0] * len(regions)
    for i, a in enumerate(regions):
        for j in range(i + 1, len(regions)):
            if a.mask & regions[j].mask:
                out[i] |= 1 << j
                out[j] |= 1 << i
    return out
