"""The suggested plan as an ordinary pass file (docs/passes.md), written the way a user writes one.

Passes come in the order their references need: the ``stream_scope`` of each moved region (with
``record: true``: its record is what readers on other streams wait for), then the ``record``
passes after the last main-stream producer of each side group's inputs, then the ``wait`` passes
(inputs at the start of each side group, outputs before the first main-stream reader). Scopes go
first so that a record inserted after a node inside a span lands inside its scope, on its stream.

Each record and wait site is named by the first selector, in this order, whose groups — computed by
the pass engine's own functions on the graph — start (waits) or end (records) exactly at the
sites: a module pattern with ``each``, the same pattern exact (``$``), an op within an exact
module, and only then node names (one group per node). A YAML comment per pass says what it
overlaps and what it is predicted to save.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from airctl.passes.select import groups, select
from airctl.passes.spec import Selector
from airctl.predict.regions import Dag, Region, module_pattern
from airctl.predict.suggest import Syncs, stream_name


@dataclass
class Written:
    name: str
    selector: dict[str, Any]
    each: bool | str


def _sel(raw: dict[str, Any]) -> Selector:
    return Selector(target=list(raw.get("target", [])) if isinstance(raw.get("target"), list)
                    else ([raw["target"]] if "target" in raw else []),
                    name=raw.get("name"), source=raw.get("source"), module=raw.get("module"))


def _ends(dag: Dag, raw: dict[str, Any], each: bool | str, end: str) -> list[int] | None:
    sel = _sel(raw)
    found = select(sel, dag.infos)
    if not found:
        return None
    return [g[0].position if end == "first" else g[-1].position for g in groups(found, sel, each)]


def selector_for(dag: Dag, sites: list[int], end: str) -> tuple[dict[str, Any], bool | str]:
    """A selector (and ``each``) whose groups start (``end="first"``) or end (``"last"``) exactly at
    ``sites``; node names when nothing else does."""
    want = sorted(set(sites))
    for raw, each in _tries(dag, want):
        got = _ends(dag, raw, each, end)
        if got is not None and sorted(got) == want and len(got) == len(want):
            return raw, each
    names = [dag.infos[i].name for i in want]
    return {"name": "|".join(re.escape(n) for n in names)}, len(names) > 1


def _tries(dag: Dag, sites: list[int]) -> list[tuple[dict[str, Any], bool | str]]:
    infos = [dag.infos[i] for i in sites]
    ops = {i.op for i in infos}
    by_op = [({"target": next(iter(ops))}, each) for each in (False, True)] if len(ops) == 1 else []
    if any(not i.module for i in infos):
        return by_op  # a target selects the same nodes whatever their frames
    out: list[tuple[dict[str, Any], bool | str]] = []
    depth = min(len(i.module.split(".")) for i in infos if i.module)
    for k in range(depth, 0, -1):
        pats = {module_pattern(".".join((i.module or "").split(".")[:k])) for i in infos}
        if len(pats) != 1:
            continue
        pat = pats.pop()
        out += [({"module": pat}, True), ({"module": pat}, False), ({"module": pat + "$"}, True)]
        if len(ops) == 1:
            out.append(({"target": next(iter(ops)), "module": pat + "$"}, True))
    return out + by_op


def _slug(region: Region) -> str:
    text = region.key.split(" ", 1)[1]
    text = re.sub(r"\.\*\.|\.", "-", text.replace(".py:", "-"))
    return re.sub(r"[^A-Za-z0-9_-]+", "", text).strip("-") or "region"


def _flow(raw: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in raw.items()) + "}"


def _each_line(each: bool | str) -> list[str]:
    if each is False:
        return []
    return [f"    each: {json.dumps(each) if isinstance(each, str) else 'true'}"]


def render(regions: list[Region], dag: Dag, assign: tuple[int, ...], syncs: Syncs, notes: dict[int, str],
           header: list[str]) -> str:
    """The pass file's text. ``notes``: per moved region, the comment on its scope."""
    lines = [f"# {h}" if h else "#" for h in header]
    lines += ["version: 1", "description: suggested by airctl passes suggest (predicted step, see the comments)",
              "passes:"]
    names: dict[tuple[str, int], str] = {}
    slugs: dict[int, str] = {}
    for r, s in enumerate(assign):
        if not s:
            continue
        slug = _slug(regions[r])
        while slug in slugs.values():
            slug += "_"
        slugs[r] = slug
        region = regions[r]
        names[("scope", r)] = f"{slug}-on-{stream_name(s)}"
        lines += [f"  # {notes.get(r, '')}", f"  - name: {names[('scope', r)]}", "    kind: stream_scope",
                  f"    stream: {stream_name(s)}", f"    select: {_flow(region.selector)}", *_each_line(region.each),
                  "    record: true"]
    for r, sites in sorted(syncs.records.items()):
        raw, each = selector_for(dag, sites, "last")
        names[("inputs", r)] = f"{slugs[r]}-inputs-ready"
        lines += [f"  # on the main stream, after the last producer of what {regions[r].key} reads",
                  f"  - name: {names[('inputs', r)]}", "    kind: record", f"    after: {_flow(raw)}",
                  *_each_line(each)]
    by_pass: dict[tuple[int, str, tuple[tuple[str, int], ...]], list[int]] = {}
    for w in syncs.waits:
        by_pass.setdefault((w.region, w.why, tuple(w.on)), []).append(w.site)
    used: set[str] = set()
    for (r, why, on), sites in by_pass.items():
        raw, each = selector_for(dag, sites, "first")
        base = f"{slugs[r]}-waits-inputs" if why == "inputs" else f"wait-for-{slugs[r]}"
        name = base
        while name in used:
            name += "_"
        used.add(name)
        what = (f"{regions[r].key} waits for its inputs from other streams" if why == "inputs"
                else f"the main stream waits for {regions[r].key} before its first reader")
        targets = [names[o] for o in on]
        lines += [f"  # {what}", f"  - name: {name}", "    kind: wait", f"    before: {_flow(raw)}", *_each_line(each),
                  f"    on: {targets[0] if len(targets) == 1 else json.dumps(targets)}"]
    return "\n".join(lines) + "\n"
