"""Selectors: which FX nodes of a live graph a pass acts on, and why a selector matched nothing.

A selector (``target``, ``name``, ``source``, ``module``, ``index``; fields AND together) is
matched against every ``call_function``-like node (placeholders only when ``target`` names
``placeholder``; the output node never). Source locations come from every frame of
``node.meta["stack_trace"]``, module paths from ``nn_module_stack`` (innermost module, so a prefix
pattern also matches its children). A pass's ``each`` turns the matches into groups — one scope,
record or wait per group (:func:`groups`). When nothing matches, :func:`near_misses` says what each
field alone matched and lists the closest candidates (op-name and name similarity, nearby source
lines, similar module paths) for the error or for ``airctl passes explain``.

>>> _module_match("layers.*.mlp", "layers.2.mlp.up"), _module_match("layers.*.mlp$", "layers.2.mlp.up")
('layers.2.mlp', None)
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from airctl.graph.roles import collective_kind, is_collective_wait
from airctl.io.fx_reader import module_of, target_name
from airctl.passes.name_pattern import compile_pattern
from airctl.passes.spec import SOURCE_LINES, Selector

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


@dataclass
class NodeInfo:
    node: Any  # torch.fx.Node
    name: str
    op: str  # target (aten.mm.default) or the FX op for placeholders/outputs
    kind: str  # FX op: call_function, placeholder, ...
    position: int
    frames: list[tuple[str, int]] = field(default_factory=list)
    module: str | None = None

    @property
    def source(self) -> str | None:
        if not self.frames:
            return None
        path, line = self.frames[-1]
        return f"{path}:{line}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.op, "source": self.source, "module": self.module,
                "position": self.position}


def node_infos(graph: Any) -> list[NodeInfo]:
    """One :class:`NodeInfo` per node of a ``torch.fx.Graph``, in graph order."""
    infos = []
    for i, node in enumerate(graph.nodes):
        kind = node.op
        op = target_name(node.target) if kind in ("call_function", "call_method", "call_module", "get_attr") else kind
        trace = node.meta.get("stack_trace") or ""
        frames = [(p, int(ln)) for p, ln in _FRAME.findall(trace)]
        infos.append(NodeInfo(node, node.name, op, kind, i, frames, module_of(node.meta)))
    return infos


def every_overload(target: str) -> bool:
    """Whether a selector's ``target`` names an op without its overload (``aten.mm``), and so matches
    every overload of it (``aten.mm.default``, ...); any other target matches one op name exactly."""
    return target.count(".") == 1


def _target_match(targets: list[str], op: str) -> bool:
    return any(op == t or (every_overload(t) and op.startswith(t + ".")) for t in targets)


def _module_match(pattern: str, module: str | None) -> str | None:
    """The module prefix ``pattern`` matched in ``module`` (None: no match)."""
    if module is None:
        return None
    exact = pattern.endswith("$")
    pat = pattern.rstrip("$").strip(".").split(".")
    parts = module.split(".")
    if len(parts) < len(pat) or (exact and len(parts) != len(pat)):
        return None
    if all(fnmatch.fnmatchcase(p, q) for p, q in zip(parts, pat, strict=False)):
        return ".".join(parts[: len(pat)])
    return None


@lru_cache(maxsize=1024)  # a selector's source, matched against every node: parsed once
def _parse_source(text: str) -> tuple[str, int | None, int | None]:
    head, sep, tail = text.rpartition(":")
    if sep and SOURCE_LINES.fullmatch(tail):
        first, _, last = tail.partition("-")
        return head, int(first), int(last or first)
    return text, None, None


def _file_match(path: str, want: str) -> bool:
    path, want = path.replace("\\", "/"), want.replace("\\", "/")
    return path == want or path.endswith("/" + want.lstrip("./"))


def _source_match(source: str, frames: list[tuple[str, int]]) -> bool:
    file, first, last = _parse_source(source)
    return any(_file_match(path, file) and (first is None or first <= line <= (last or first)) for path, line in frames)


def selectable(info: NodeInfo, sel: Selector) -> bool:
    if info.kind == "output":
        return False
    if info.kind == "placeholder":
        return "placeholder" in sel.target
    return True


def field_matches(sel: Selector, info: NodeInfo, which: str) -> bool:
    if which == "target":
        return _target_match(sel.target, info.op)
    if which == "name":
        return compile_pattern(sel.name or "").fullmatch(info.name)
    if which == "source":
        return _source_match(sel.source or "", info.frames)
    if which == "module":
        return _module_match(sel.module or "", info.module) is not None
    if which == "collective":
        kind = collective_kind(info.op)
        return kind is not None and ("any" in sel.collective or kind in sel.collective)
    raise ValueError(which)


def active_fields(sel: Selector) -> list[str]:
    present = {"target": bool(sel.target), "name": sel.name is not None, "source": sel.source is not None,
               "module": sel.module is not None, "collective": bool(sel.collective)}
    return [k for k, v in present.items() if v]


def match_all(sel: Selector, infos: Iterable[NodeInfo]) -> list[NodeInfo]:
    """Every node the selector's fields match, before ``index``."""
    fields = active_fields(sel)
    return [i for i in infos if selectable(i, sel) and all(field_matches(sel, i, f) for f in fields)]


def select(sel: Selector, infos: list[NodeInfo]) -> list[NodeInfo]:
    """The nodes a selector picks: every match, or the ``index``-th one (empty when out of range)."""
    found = match_all(sel, infos)
    if sel.index is None:
        return found
    if -len(found) <= sel.index < len(found):
        return [found[sel.index]]
    return []


def groups(found: list[NodeInfo], sel: Selector, each: bool | str) -> list[list[NodeInfo]]:
    """Split matches into the groups a pass treats as one unit (graph order kept). A ``collective``
    selector's groups also hold the ``wait_tensor`` of each collective they hold."""
    if not found:
        return []
    if each is False:
        return _with_waits([found], sel)
    pattern = each if isinstance(each, str) else sel.module
    if pattern is None:  # each: true without a module selector -> every match alone
        return _with_waits([[i] for i in found], sel)
    by_key: dict[str, list[NodeInfo]] = {}
    for info in found:
        key = _module_match(pattern, info.module)
        if key is not None:
            by_key.setdefault(key, []).append(info)
    return _with_waits(list(by_key.values()), sel)


def _with_waits(found: list[list[NodeInfo]], sel: Selector) -> list[list[NodeInfo]]:
    """Each group with the waits of its collectives added, in graph order (``collective`` selectors)."""
    if not sel.collective:
        return found
    graph = found[0][0].node.graph
    positions = {n: k for k, n in enumerate(graph.nodes)}
    out = []
    for group in found:
        members = {i.node: i for i in group}
        for info in group:
            for user in info.node.users if collective_kind(info.op) is not None else ():
                op = target_name(user.target) if user.op == "call_function" else user.op
                if is_collective_wait(op) and user not in members:
                    members[user] = NodeInfo(user, user.name, op, user.op, positions[user])
        out.append(sorted(members.values(), key=lambda i: i.position))
    return out


# -- explaining a miss --------------------------------------------------------------------------
@dataclass
class Miss:
    """Why a selector matched nothing: per-field counts and the closest candidates."""

    selector: Selector
    field_counts: dict[str, int]
    candidates: list[dict[str, Any]]
    total: int  # matches before index

    def message(self) -> str:
        sel = self.selector
        if self.total and sel.index is not None:
            return f"selector ({sel.describe()}) has index {sel.index} but only {self.total} node(s) match"
        parts = [f"{k} alone matches {n}" for k, n in self.field_counts.items()]
        extra = f" ({'; '.join(parts)})" if len(self.field_counts) > 1 else ""
        return f"selector ({sel.describe()}) matched no node{extra}"

    def hint(self) -> str | None:
        if not self.candidates:
            return None
        shown = []
        for c in self.candidates[:5]:
            where = f" at {c['source']}" if c.get("source") else ""
            shown.append(f"{c['value']} ({c['why']}{where})")
        return "closest: " + "; ".join(shown)

    def to_json(self) -> dict[str, Any]:
        return {"selector": self.selector.to_json(), "field_counts": self.field_counts, "candidates": self.candidates,
                "matches_before_index": self.total, "message": self.message()}


def near_misses(sel: Selector, infos: list[NodeInfo]) -> Miss:
    pool = [i for i in infos if i.kind not in ("output", "placeholder")]
    fields = active_fields(sel)
    counts = {f: sum(1 for i in pool if field_matches(sel, i, f)) for f in fields}
    candidates: list[dict[str, Any]] = []
    for f in fields:
        if counts[f] and len(fields) > 1:
            continue
        candidates.extend(_closest(sel, f, pool))
    total = len(match_all(sel, infos))
    return Miss(sel, counts, candidates, total)


def _first_with(pool: list[NodeInfo], pred: Any) -> NodeInfo | None:
    return next((i for i in pool if pred(i)), None)


def _closest(sel: Selector, which: str, pool: list[NodeInfo]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if which == "target":
        ops = sorted({i.op for i in pool})
        for t in sel.target:
            wanted = t.split(".")[1] if t.count(".") >= 1 else t
            similar = difflib.get_close_matches(t, ops, n=5, cutoff=0.5)
            similar += [o for o in ops if wanted and wanted in o.split(".")[1:2] and o not in similar]
            if t.startswith("aten.view") and "aten.reshape.default" in ops and "aten.reshape.default" not in similar:
                similar.insert(0, "aten.reshape.default")
            for op in similar[:5]:
                node = _first_with(pool, lambda i, op=op: i.op == op)
                count = sum(1 for i in pool if i.op == op)
                out.append({"field": "target", "value": op, "why": f"similar op, {count} node(s), e.g. {node.name}"
                            if node else "similar op", "source": node.source if node else None})
    elif which == "name":
        names = [i.name for i in pool]
        plain = re.sub(r"[\\^$.*+?()\[\]{}|]", "", sel.name or "")
        for name in difflib.get_close_matches(plain, names, n=5, cutoff=0.5):
            node = _first_with(pool, lambda i, name=name: i.name == name)
            out.append({"field": "name", "value": name, "why": f"similar name, op {node.op}" if node else "",
                        "source": node.source if node else None})
    elif which == "module":
        modules: set[str] = set()
        for i in pool:
            if i.module:
                parts = i.module.split(".")
                modules.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
        pattern = (sel.module or "").rstrip("$")
        for mod in difflib.get_close_matches(pattern, sorted(modules), n=5, cutoff=0.5):
            count = sum(1 for i in pool if _module_match(mod, i.module))
            out.append({"field": "module", "value": mod, "why": f"similar module path, {count} node(s)",
                        "source": None})
    elif which == "collective":
        kinds: dict[str, list[NodeInfo]] = {}
        for i in pool:
            kind = collective_kind(i.op)
            if kind is not None:
                kinds.setdefault(kind, []).append(i)
        for kind, nodes in kinds.items():
            out.append({"field": "collective", "value": kind, "why": f"{len(nodes)} node(s), e.g. {nodes[0].name} "
                        f"({nodes[0].op})", "source": nodes[0].source})
        if not kinds:
            out.append({"field": "collective", "value": "(none)", "source": None,
                        "why": "the graph has no collective: no torch.distributed call was traced into it"})
    elif which == "source":
        file, first, _ = _parse_source(sel.source or "")
        lines: dict[int, NodeInfo] = {}
        files: set[str] = set()
        for i in pool:
            for path, line in i.frames:
                files.add(path)
                if _file_match(path, file):
                    lines.setdefault(line, i)
        if lines:
            near = sorted(lines, key=lambda ln: abs(ln - (first or ln)))[:5]
            for ln in sorted(near):
                node = lines[ln]
                out.append({"field": "source", "value": f"{file}:{ln}", "why": f"line with nodes, e.g. {node.name} "
                            f"({node.op})", "source": node.source})
        else:
            for path in difflib.get_close_matches(file, sorted(files), n=3, cutoff=0.3) or sorted(files)[:3]:
                out.append({"field": "source", "value": path, "why": "a file the graph's nodes come from",
                            "source": None})
    return out
