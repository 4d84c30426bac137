"""YAML that remembers where it was written: every mapping and list, and each of their keys and items.

A pass file's errors point at ``file:line:column`` (:mod:`airctl.passes.spec`): :class:`MarkedLoader`
(a ``yaml.SafeLoader`` bounded by :mod:`airctl.passes.yaml_bounds`) builds :class:`MarkedDict` and
:class:`MarkedList`, which carry the marks, and :func:`where` finds the line and column of a path
inside the document (a schema violation's, a selector's). A repeated key is an error, not the
last one silently kept.

>>> doc = yaml.load("passes:\\n  - {name: a}\\n", Loader=MarkedLoader)
>>> where(doc, ("passes", 0, "name"))
(2, 12)
"""

from __future__ import annotations

from typing import Any

import yaml

from airctl.errors import SpecError
from airctl.passes.yaml_bounds import BoundedComposer


class MarkedDict(dict):
    """A YAML mapping that knows where it and each of its keys and values were written."""

    line: int = 0
    column: int = 0
    key_marks: dict[Any, tuple[int, int]]
    value_marks: dict[Any, tuple[int, int]]


class MarkedList(list):
    line: int = 0
    column: int = 0
    item_marks: list[tuple[int, int]]


class MarkedLoader(BoundedComposer):
    pass


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _construct_map(loader: MarkedLoader, node: yaml.MappingNode):  # type: ignore[no-untyped-def]
    data = MarkedDict()
    data.line, data.column = _mark(node)
    data.key_marks, data.value_marks = {}, {}
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag == "tag:yaml.org,2002:bool":
            key = key_node.value  # YAML 1.1 reads a bare `on:` key as True; keys here are words
        else:
            key = loader.construct_object(key_node, deep=True)
        if key in data:
            line, col = _mark(key_node)
            raise SpecError(f"duplicate key `{key}`", line=line, column=col,
                            hint="a YAML mapping keeps only the last of repeated keys; remove one")
        data[key] = loader.construct_object(value_node, deep=True)
        data.key_marks[key] = _mark(key_node)
        data.value_marks[key] = _mark(value_node)


def _construct_seq(loader: MarkedLoader, node: yaml.SequenceNode):  # type: ignore[no-untyped-def]
    data = MarkedList()
    data.line, data.column = _mark(node)
    data.item_marks = [_mark(n) for n in node.value]
    yield data
    data.extend(loader.construct_object(n, deep=True) for n in node.value)


MarkedLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
MarkedLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def where(doc: Any, path: tuple[Any, ...], at_key: bool = False) -> tuple[int | None, int | None]:
    """Line and column of ``path`` inside the marked document (its nearest known ancestor)."""
    node, best = doc, (getattr(doc, "line", None), getattr(doc, "column", None))
    for i, step in enumerate(path):
        last = i == len(path) - 1
        if isinstance(node, MarkedDict) and step in node:
            marks = node.key_marks if (last and at_key) else node.value_marks
            best = marks.get(step, best)
            node = node[step]
        elif isinstance(node, MarkedList) and isinstance(step, int) and 0 <= step < len(node):
            best = node.item_marks[step]
            node = node[step]
        else:
            break
    return best
