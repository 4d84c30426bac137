"""A YAML loader whose document cannot grow past a bound, however its aliases nest.

A YAML alias (``*a``) stands for the whole node its anchor (``&a``) named, and a reader that walks
the document walks it once per alias: nine lines of nested aliases ("billion laughs") make a
document of a billion nodes from 1 KB of text. PyYAML shares the constructed objects, so the load
itself is quick, but everything after it (the schema check, ``to_json``, the ledger) walks the
expansion and took gigabytes while Ctrl-C waited. Here the composer counts every node as the
document would be walked, an alias counting the whole of its anchor's node, and stops at
:data:`~airctl.limits.PASS_FILE_NODES` with the line of the node that crossed it. An alias inside
its own anchor (a document that contains itself) is refused too: nothing after the load can walk it.

The count costs one integer per anchored node; the bytes read are bounded before this
(:data:`~airctl.limits.PASS_FILE_BYTES`).
"""

from __future__ import annotations

from typing import Any

import yaml

from airctl.errors import SpecError
from airctl.limits import PASS_FILE_NODES

HINT = ("a pass file is a few hundred lines; anchors and aliases may share a selector, "
        "not multiply the document")


class BoundedComposer(yaml.SafeLoader):
    """``yaml.SafeLoader`` counting the nodes of the expanded document (see the module)."""

    node_limit: int = PASS_FILE_NODES

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._nodes = 0
        self._anchored: dict[str, int] = {}  # anchor -> its node's expanded size, once composed

    def _count(self, n: int, mark: yaml.Mark | None) -> None:
        self._nodes += n
        if self._nodes > self.node_limit:
            line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
            raise SpecError(f"the YAML expands past {self.node_limit:,} nodes (aliases counted as what they "
                            "stand for): too large to be a pass file", line=line, column=col, hint=HINT)

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102 - PyYAML's hook
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            size = self._anchored.get(event.anchor)  # type: ignore[arg-type]
            if size is None and event.anchor in self.anchors:
                mark = event.start_mark
                raise SpecError(f"the alias *{event.anchor} is inside the node its anchor names: the document "
                                "would contain itself", line=mark.line + 1, column=mark.column + 1, hint=HINT)
            self._count(size or 1, event.start_mark)
            return super().compose_node(parent, index)
        before = self._nodes
        self._count(1, event.start_mark)
        node = super().compose_node(parent, index)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._anchored[anchor] = self._nodes - before
        return node

    def compose_document(self) -> Any:  # noqa: D102 - PyYAML's hook
        self._anchored = {}
        return super().compose_document()
