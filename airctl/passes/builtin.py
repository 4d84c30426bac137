"""The built-in pass kinds: builders that turn a :class:`PassSpec` into a TorchAir custom pass.

Each builder returns a plain function ``fn(gm, example_inputs, config) -> None`` that mutates
``gm.graph`` in place, exactly as a hand-written TorchAir pass does (style.md §6): the scope kinds
insert ``air.scope_enter(keys, values)`` before a span's first node and ``[air.record,]
air.scope_exit`` after its last; ``record`` inserts ``air.record()`` after a node; ``wait``
inserts ``air.wait([record, ...])`` before a node. Scope keys and value strings are TorchAir's
(reference/torchair.md §1.2–1.3). Every node a pass inserts carries
``node.meta["airctl_pass"] = <pass name>``, which is how a later ``wait`` finds the records it
names. A pass resolves all its selectors before it touches the graph, so a failing selector leaves
the graph unchanged. Run by npugraph_ex (its config is the pass's third argument), the same passes
insert npugraph_ex's copies, ``npugraph_ex.scope_enter`` and so on: its compiler recognises only
its own namespace (reference/torchair.md "npugraph_ex").

>>> scope_args(PassSpec("s", "stream_scope", "pre", {"stream": "s1", "priority": 2}, 1, 1))
(['_user_stream_label', '_user_stream_priority'], ['s1', '2'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airctl.errors import PassError
from airctl.graph.model import is_stream_op
from airctl.io.fx_reader import target_name
from airctl.passes import schema
from airctl.passes.placements import ATTR, Placements, unit
from airctl.passes.select import NodeInfo, groups, near_misses, node_infos, select
from airctl.passes.spec import PassSpec, Selector

PassFn = Callable[[Any, Any, Any], Any]
PASS_META = "airctl_pass"


def stream_ops(config: Any) -> Any:
    """``torch.ops.air``, or ``torch.ops.npugraph_ex`` when ``config`` is npugraph_ex's own config."""
    import torch

    if type(config).__module__.startswith("npugraph_ex") and hasattr(torch.ops, "npugraph_ex"):
        return torch.ops.npugraph_ex
    return torch.ops.air


class SelectorMissed(PassError):
    """A selector matched nothing (the composer skips the pass when it is ``optional``)."""


def scope_args(spec: PassSpec) -> tuple[list[str], list[str]]:
    """``scope_enter``'s (keys, values) for a scope kind, in TorchAir's key order, values as strings."""
    keys: list[str] = []
    values: list[str] = []
    props = schema.KINDS[spec.kind]["properties"]
    for field_name, key in schema.KINDS[spec.kind]["scope_keys"]:
        value = spec.fields.get(field_name, props[field_name].get("default"))
        if value is None:
            continue
        keys.append(key)
        values.append(str(value))  # str(True) == "True", as torchair.scope does
    return keys, values


def _miss(spec: PassSpec, sel: Selector, infos: list[NodeInfo], role: str) -> SelectorMissed:
    miss = near_misses(sel, infos)
    error = SelectorMissed(f"pass `{spec.name}`: `{role}` {miss.message()}", file=spec.file,
                           line=sel.line or spec.line, column=sel.column, hint=miss.hint())
    error.miss = miss  # type: ignore[attr-defined]
    return error


def _pick(spec: PassSpec, role: str, infos: list[NodeInfo]) -> list[NodeInfo]:
    sel = spec.selectors[role]
    found = select(sel, infos)
    if not found:
        raise _miss(spec, sel, infos, role)
    return found


def _node_error(spec: PassSpec, message: str, info: NodeInfo | None, hint: str | None = None) -> PassError:
    return PassError(f"pass `{spec.name}`: {message}", file=spec.file, line=spec.line, column=spec.column,
                     node=info.name if info else None, hint=hint)


def _spans(spec: PassSpec, infos: list[NodeInfo]) -> list[tuple[NodeInfo, NodeInfo]]:
    if "select" in spec.selectors:
        found = _pick(spec, "select", infos)
        return [(g[0], g[-1]) for g in groups(found, spec.selectors["select"], spec.each)]
    starts = _pick(spec, "from", infos)
    ends = _pick(spec, "to", infos)
    if spec.each is False:
        pairs = [(starts[0], ends[-1])]
    else:  # each `from` group opens a range closed by the first `to` match at or after it
        pairs = []
        for group in groups(starts, spec.selectors["from"], spec.each):
            end = next((e for e in ends if e.position >= group[0].position), None)
            if end is None:
                raise _node_error(spec, f"no `to` match after `{group[0].name}`", group[0])
            pairs.append((group[0], end))
    for first, last in pairs:
        if last.position < first.position:
            raise _node_error(spec, f"range ends at `{last.name}` (node {last.position}) before it starts at "
                                    f"`{first.name}` (node {first.position})", first,
                              hint="swap from/to, or pick other matches with index")
    return pairs


def _check_spans(spec: PassSpec, spans: list[tuple[NodeInfo, NodeInfo]], infos: list[NodeInfo]) -> None:
    ordered = sorted(spans, key=lambda s: s[0].position)
    for (a0, a1), (b0, _) in zip(ordered, ordered[1:], strict=False):
        if b0.position <= a1.position:
            raise _node_error(spec, f"spans overlap: `{a0.name}`..`{a1.name}` and one starting at `{b0.name}` would "
                                    f"nest scopes (R10)", b0, hint="narrow the selectors or use `each` groups that "
                                                                   "do not overlap")
    for first, last in spans:
        depth = 0
        for info in infos[first.position: last.position + 1]:
            if is_stream_op(info.op, "scope_enter"):
                depth += 1
            elif is_stream_op(info.op, "scope_exit"):
                depth -= 1
            if depth < 0:
                raise _node_error(spec, f"span `{first.name}`..`{last.name}` crosses the end of an enclosing scope "
                                        f"at `{info.name}`: scope_enter/scope_exit would interleave (R1)", info)
        if depth != 0:
            raise _node_error(spec, f"span `{first.name}`..`{last.name}` contains a scope_enter without its "
                                    f"scope_exit (R1)", first)
        if first.kind == "placeholder":
            raise _node_error(spec, "a scope cannot start at a placeholder", first)


def _tag(node: Any, spec: PassSpec) -> Any:
    node.meta[PASS_META] = spec.name
    return node


def _span_unit(span: tuple[NodeInfo, NodeInfo], infos: list[NodeInfo]) -> dict[str, Any]:
    first, last = span
    text = first.name if first is last else f"{first.name}..{last.name}"
    nodes = [i.name for i in infos[first.position: last.position + 1]]
    return unit(f"{text} ({first.module})" if first.module else text, nodes)


PassBody = Callable[[Any, Any, list[NodeInfo], Placements], None]


def _fx_pass(spec: PassSpec, name: str, body: PassBody) -> PassFn:
    """The TorchAir pass ``name`` that runs ``body(graph, ops, infos, placements)`` on ``gm.graph`` (``ops``:
    the config's stream ops, ``infos``: the graph's nodes) and recompiles ``gm``."""
    placements = Placements(spec.placements)

    def fx_pass(gm: Any, example_inputs: Any, config: Any) -> None:
        graph = gm.graph
        body(graph, stream_ops(config), node_infos(graph), placements)
        gm.recompile()

    fx_pass.__name__ = name
    setattr(fx_pass, ATTR, placements)
    return fx_pass


def wrap_range_in_scope(spec: PassSpec) -> PassFn:
    """stream_scope, limit_core_num, super_kernel, op_never_timeout."""
    keys, values = scope_args(spec)
    with_record = bool(spec.fields.get("record", False))

    def scope_pass(graph: Any, ops: Any, infos: list[NodeInfo], placements: Placements) -> None:
        spans = _spans(spec, infos)
        _check_spans(spec, spans, infos)
        for first, last in placements.choose(spans, lambda span: _span_unit(span, infos)):
            with graph.inserting_before(first.node):
                _tag(graph.call_function(ops.scope_enter.default, args=(list(keys), list(values))), spec)
            tail = last.node
            if with_record:
                with graph.inserting_after(tail):
                    tail = _tag(graph.call_function(ops.record.default, args=()), spec)
            with graph.inserting_after(tail):
                _tag(graph.call_function(ops.scope_exit.default, args=()), spec)

    return _fx_pass(spec, f"wrap_range_in_{spec.kind}", scope_pass)


def insert_record_after(spec: PassSpec) -> PassFn:
    def record_pass(graph: Any, ops: Any, infos: list[NodeInfo], placements: Placements) -> None:
        found = _pick(spec, "after", infos)
        chosen = placements.choose(groups(found, spec.selectors["after"], spec.each),
                                   lambda g: unit(f"after {g[-1].name}", [i.name for i in g]))
        for group in chosen:
            with graph.inserting_after(group[-1].node):
                _tag(graph.call_function(ops.record.default, args=()), spec)

    return _fx_pass(spec, "record_pass", record_pass)


def _records(graph: Any, maker: str) -> list[Any]:
    return [n for n in graph.nodes if n.meta.get(PASS_META) == maker and n.op == "call_function"
            and is_stream_op(target_name(n.target), "record")]


def insert_wait_before(spec: PassSpec) -> PassFn:
    def wait_pass(graph: Any, ops: Any, infos: list[NodeInfo], placements: Placements) -> None:
        position = {i.node: i.position for i in infos}
        found = _pick(spec, "before", infos)
        plan: list[tuple[NodeInfo, list[Any]]] = []
        for group in groups(found, spec.selectors["before"], spec.each):
            site = group[0]
            tokens = []
            for maker in spec.on:
                earlier = [r for r in _records(graph, maker) if position[r] < site.position]
                if not earlier:
                    made = _records(graph, maker)
                    why = (f"its records are all after it ({', '.join(r.name for r in made)})" if made
                           else f"`{maker}` inserted no record in this graph")
                    raise _node_error(spec, f"no record of `{maker}` precedes `{site.name}`: {why}", site,
                                      hint="a wait orders work after a record that comes earlier in the graph")
                tokens.append(earlier[-1])
            plan.append((site, tokens))
        for site, tokens in placements.choose(plan, lambda p: unit(f"before {p[0].name}", [p[0].name])):
            with graph.inserting_before(site.node):
                _tag(graph.call_function(ops.wait.default, args=(tokens,)), spec)

    return _fx_pass(spec, "wait_pass", wait_pass)


def build(spec: PassSpec, base_dir: Any = None) -> PassFn:
    """The TorchAir custom pass for one spec."""
    if spec.kind in schema.SCOPE_KINDS:
        return wrap_range_in_scope(spec)
    if spec.kind == "record":
        return insert_record_after(spec)
    if spec.kind == "wait":
        return insert_wait_before(spec)
    if spec.kind == "python":
        from airctl.passes.placements import restrict_plugin
        from airctl.passes.plugin import load_plugin

        return restrict_plugin(load_plugin(spec, base_dir), spec.placements)
    raise PassError(f"pass `{spec.name}`: no builder for kind {spec.kind!r}", file=spec.file, line=spec.line)
