"""Selectors a user would write for a set of record or wait sites, checked with the pass engine.

A ``record`` pass records after the *last* node of each group its selector makes, a ``wait`` pass
waits before the *first* (docs/passes.md). :func:`choose` looks for a selector whose groups end
(``end="last"``) or start (``"first"``) at one acceptable position per site: exactly the site
first, then anywhere in the site's window (a record anywhere after the producer and before the
reader still orders them; the plan is then built on the position the selector really gives). It
tries, in order: a module pattern with ``each`` (``layers.*.ln1``), the pattern exact (``$``), a
source line within an exact module, an op within an exact module, an op alone; only then node
names, which always select exactly. ``source:`` is only written together with an exact module: a
snapshot keeps a node's innermost frame while the selector matches every frame, and within an
exact module no deeper call can add nodes the line did not make.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from airctl.passes.select import NodeInfo, groups, select
from airctl.passes.spec import Selector


@dataclass(frozen=True)
class Choice:
    selector: tuple[tuple[str, str], ...]  # the YAML selector's fields, in order
    each: bool | str
    positions: tuple[int, ...]  # where each group starts or ends, in graph order

    @property
    def raw(self) -> dict[str, Any]:
        return dict(self.selector)


def module_pattern(path: str) -> str:
    """``layers.0.attn.k_proj`` → ``layers.*.attn.k_proj``; a last numeric component stays.

    >>> module_pattern("layers.0.attn.k_proj"), module_pattern("experts.1"), module_pattern("left")
    ('layers.*.attn.k_proj', 'experts.1', 'left')
    """
    parts = path.split(".")
    return ".".join("*" if p.isdigit() and k < len(parts) - 1 else p for k, p in enumerate(parts))


def ends(infos: list[NodeInfo], raw: dict[str, Any], each: bool | str, end: str) -> list[int] | None:
    """Where the groups of ``raw`` start (``first``) or end (``last``), by the pass engine's rules."""
    sel = Selector(target=[raw["target"]] if "target" in raw else [], name=raw.get("name"),
                   source=raw.get("source"), module=raw.get("module"))
    found = select(sel, infos)
    if not found:
        return None
    return sorted(g[0].position if end == "first" else g[-1].position for g in groups(found, sel, each))


def names_choice(infos: list[NodeInfo], sites: list[int]) -> Choice:
    names = [infos[i].name for i in sites]
    return Choice((("name", "|".join(re.escape(n) for n in names)),), len(names) > 1, tuple(sites))


def choose(infos: list[NodeInfo], sites: list[int], end: str, windows: list[tuple[int, int]],
           ok: Callable[[int], bool]) -> Choice:
    """A selector for ``sites`` (sorted, one per window ``(lo, hi)`` that holds it)."""
    tries = _tries(infos, sites)
    for exact in (True, False):
        for raw, each in tries:
            got = ends(infos, raw, each, end)
            if got is None or len(got) != len(sites):
                continue
            if exact and got == sites or not exact and all(lo <= p <= hi and ok(p)
                                                          for p, (lo, hi) in zip(got, windows, strict=True)):
                return Choice(tuple(raw.items()), each, tuple(got))
    return names_choice(infos, sites)


def file_line(source: str) -> str:
    """A node's ``path/to/file.py:LINE`` as ``file.py:LINE`` (what a suggested selector and a region's label show)."""
    path, _, line = source.rpartition(":")
    return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}"


def _tries(infos: list[NodeInfo], sites: list[int]) -> list[tuple[dict[str, Any], bool | str]]:
    at = [infos[i] for i in sites]
    ops = {i.op for i in at}
    op = next(iter(ops)) if len(ops) == 1 else None
    by_op: list[tuple[dict[str, Any], bool | str]] = [({"target": op}, e) for e in (False, True)] if op else []
    if any(not i.module for i in at):
        return by_op  # a target selects the same nodes whatever their frames
    out: list[tuple[dict[str, Any], bool | str]] = []
    lines = {file_line(i.source) for i in at if i.source}
    line = next(iter(lines)) if len(lines) == 1 and all(i.source for i in at) else None
    depth = min(len((i.module or "").split(".")) for i in at)
    for k in range(depth, 0, -1):
        pats = {module_pattern(".".join((i.module or "").split(".")[:k])) for i in at}
        if len(pats) != 1:  # layers.0, layers.1: the last component globbed too
            pats = {".".join("*" if p.isdigit() else p for p in (i.module or "").split(".")[:k]) for i in at}
        if len(pats) != 1:
            continue
        pat = pats.pop()
        out += [({"module": pat}, True), ({"module": pat}, False), ({"module": pat + "$"}, True)]
        if line and k == depth:
            out.append(({"source": line, "module": pat + "$"}, True))
        if op and k == depth:
            out.append(({"target": op, "module": pat + "$"}, True))
    return out + by_op


def _user_line(info: NodeInfo) -> bool:
    """Whether ``info`` was made by a line of the user's own code (not a library's, not unknown)."""
    source = (info.source or "").replace(chr(92), "/")
    return bool(source) and "-packages/" not in source and "/lib/python" not in source


def line_selector(infos: list[NodeInfo], span: tuple[int, int]) -> dict[str, Any] | None:
    """A ``source:`` selector for a line region (nodes outside any module, made by one line), or None.

    A snapshot keeps a node's innermost frame, while ``source:`` matches every frame: nodes a call on
    the line made deeper (a library function's) match in the live graph too. The selector is written
    when, in the snapshot, its one group spans exactly the region, and the nodes just outside the span
    were made by other lines of the user's code (or are the graph's inputs and output): the line's
    deeper nodes, made while the line ran, lie between its own, so the live span is the same. Names
    survive no retrace (``mm_3`` becomes ``mm_4``); a line does.
    """
    lo, hi = span
    source = infos[lo].source
    if not source or any(infos[p].module or infos[p].source != source for p in (lo, hi)):
        return None
    raw = {"source": file_line(source)}
    if ends(infos, raw, False, "first") != [lo] or ends(infos, raw, False, "last") != [hi]:
        return None
    for p in (lo - 1, hi + 1):
        if 0 <= p < len(infos) and infos[p].kind not in ("placeholder", "output", "get_attr") \
                and not (_user_line(infos[p]) and infos[p].source != source):
            return None
    return raw


def lines_by_source(regions: list[Any], infos: list[NodeInfo]) -> None:
    """Each line region (:class:`airctl.predict.regions.Region`, ``key`` ``line m.py:17``, selected by node
    names) selected by its line instead where :func:`line_selector` finds that selects the same span."""
    for r in regions:
        if r.key.startswith("line ") and "name" in r.selector and len(r.spans) == 1:
            found = line_selector(infos, r.spans[0])
            if found is not None:
                r.selector = found
