"""Placements: the units a pass applies, numbered, so that a pass can be cut down to some of them.

A pass acts in units. A scope kind wraps one span per group of matches; ``record`` inserts one
record per group; ``wait`` one wait per site; a ``kind: python`` plugin changes nodes in place or
inserts new ones (each changed or inserted node is one unit). The units a pass found, described
(``mm..relu (blocks.0)``, ``before add``, ``add: aten.add.Tensor -> aten.sub.Tensor``), go into its
ledger stage as ``placements`` (``{"unit": description, "nodes": [node names]}``). A pass file
may keep only some of them with ``placements: [0, 2]`` (indices into that list, per graph the
pass runs on): ``airctl bisect`` shrinks a culprit pass this way (delta debugging), and writes
the result into the pass file of its reproducer.

For a python plugin the cut is made after it ran: a changed node it should not have changed gets
its target and arguments back, an inserted node nothing uses is erased (one that a kept node uses
stays). Nodes a plugin removed cannot be put back and are not units.

>>> p = Placements([1])
>>> p.choose(["a", "b"], lambda u: unit(u.upper(), [u])), p.found
(['b'], [{'unit': 'A', 'nodes': ['a']}, {'unit': 'B', 'nodes': ['b']}])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from airctl.io.fx_reader import target_name

T = TypeVar("T")
ATTR = "airctl_placements"  # the attribute of a built pass holding its Placements


class Placements:
    """The units one pass found in its latest run, and which of them it keeps (None: all)."""

    def __init__(self, keep: Sequence[int] | None = None) -> None:
        self.keep = None if keep is None else sorted(set(int(i) for i in keep))
        self.found: list[dict[str, Any]] = []

    def choose(self, units: Sequence[T], describe: Callable[[T], dict[str, Any]]) -> list[T]:
        """Record every unit (``describe`` gives its :func:`unit` record) and return those to apply."""
        self.found = [describe(u) for u in units]
        if self.keep is None:
            return list(units)
        return [u for i, u in enumerate(units) if i in self.keep]


def unit(text: str, nodes: Sequence[str]) -> dict[str, Any]:
    """One unit as the ledger lists it: what it is, and the graph nodes it covers."""
    return {"unit": text, "nodes": list(nodes)}


def of(fn: Any) -> Placements | None:
    """The :class:`Placements` a built pass records into (None for a raw callable)."""
    return getattr(fn, ATTR, None)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - tensors and odd objects in args: compare by identity
        return a is b


def restrict_plugin(fn: Callable[..., Any], keep: Sequence[int] | None) -> Callable[..., Any]:
    """A python plugin that records the nodes it changed or inserted, and undoes those not in ``keep``."""
    placements = Placements(keep)

    def plugin_with_placements(gm: Any, example_inputs: Any, config: Any) -> Any:
        graph = gm.graph
        before = {node: (node.target, node.args, node.kwargs) for node in graph.nodes}
        result = fn(gm, example_inputs, config)
        edits: list[tuple[Any, tuple[Any, Any, Any] | None]] = []
        for node in graph.nodes:
            old = before.get(node)
            if old is None:
                edits.append((node, None))
            elif not (_same(old[0], node.target) and _same(old[1], node.args) and _same(old[2], node.kwargs)):
                edits.append((node, old))
        kept = placements.choose(edits, _describe_edit)
        if placements.keep is not None:
            chosen = {id(node) for node, _ in kept}
            for node, old in reversed(edits):
                if id(node) in chosen:
                    continue
                if old is not None:
                    node.target, node.args, node.kwargs = old
                elif not node.users:
                    graph.erase_node(node)
            gm.recompile()
        return result

    plugin_with_placements.__name__ = getattr(fn, "__name__", "plugin")
    plugin_with_placements.__wrapped__ = fn  # type: ignore[attr-defined]
    if hasattr(fn, "airctl_plugin_file"):
        plugin_with_placements.airctl_plugin_file = fn.airctl_plugin_file  # type: ignore[attr-defined]
    setattr(plugin_with_placements, ATTR, placements)
    return plugin_with_placements


def _describe_edit(edit: tuple[Any, tuple[Any, Any, Any] | None]) -> dict[str, Any]:
    node, old = edit
    if old is None:
        return unit(f"{node.name}: inserted {target_name(node.target)}", [node.name])
    if not _same(old[0], node.target):
        return unit(f"{node.name}: {target_name(old[0])} -> {target_name(node.target)}", [node.name])
    return unit(f"{node.name}: arguments changed", [node.name])
