"""The suggested plan as an ordinary pass file (docs/passes.md), written the way a user writes one.

Passes come in the order their references need: the ``stream_scope`` of each moved region (with
``record: true``: its record is what readers on other streams wait for), then the ``record``
passes after the last main-stream producer of each side group's inputs, then the ``wait`` passes
(inputs at the start of each side group, outputs before the first main-stream reader). Scopes go
first so that a record inserted after a node inside a span lands inside its scope, on its stream.

Selectors of records and waits come from :mod:`airctl.predict.selectors` (module patterns first,
node names last), chosen while the candidate plan was built, so the file is the plan that was
replayed. A YAML comment per pass says what it overlaps and what it is predicted to save.
"""

from __future__ import annotations

import json
import re
from typing import Any

from airctl.predict.candidate import Syncs
from airctl.predict.regions import Region


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


def only_in(planned: str, others: list[str], breaks: int = 0) -> tuple[list[str], str | None]:
    """The fields that keep a plan made for graph ``planned`` (a ledger id, ``1-inference``) off the run's
    ``others``, and the note that says so: ``graphs: [kind]`` when no other graph is of its AOT kind, else
    ``optional: true`` (a selector that matches nothing there skips the pass instead of failing the
    compile), so too when the run's ``breaks`` graph breaks made graphs a plan-only compile never reached.

    >>> only_in("1-inference", ["2-forward"])[0], only_in("1-inference", ["2-inference"])[0]
    (['    graphs: [inference]'], ['    optional: true'])
    >>> only_in("1-inference", [], breaks=1)[0], only_in("1-forward", [])
    (['    optional: true'], ([], None))
    """
    unseen = len(others) + 1 <= breaks
    if not others and not unseen:
        return [], None
    kind = planned.split("-", 1)[-1]
    if not unseen and kind in ("inference", "forward", "backward") and all(o.split("-", 1)[-1] != kind
                                                                             for o in others):
        only, how = [f"    graphs: [{kind}]"], f"each pass says graphs: [{kind}], so they are not touched"
    else:
        only, how = ["    optional: true"], "each pass is optional: in a graph where its selector matches nothing " \
                                             "it is skipped"
    left = ", ".join(others) if others else f"the graph(s) after its {breaks} graph break(s), which a plan-only " \
                                             "compile does not reach"
    longest = " (the longest single-stream step)" if others else ""
    return only, f"planned graph {planned}{longest}; left as they are: {left}; {how}"


def render(regions: list[Region], assign: tuple[int, ...], syncs: Syncs, notes: dict[int, str],
           header: list[str], streams: list[str], taken: set[str] | None = None, stage: str = "pre",
           only: list[str] | None = None) -> str:
    """The pass file's text. ``notes``: per moved region, the comment on its scope; ``streams``: the
    stream names by number; ``taken``: pass names in use (``--from``: then only the passes are
    written, for :func:`merge`); ``stage``: the hook every pass runs in; ``only``: fields every pass
    carries to stay in the planned graph (:func:`only_in`)."""
    at = ([f"    stage: {stage}"] if stage != "pre" else []) + list(only or [])
    lines = [] if taken is not None else [f"# {h}" if h else "#" for h in header]
    if taken is None:
        lines += ["version: 1", "description: suggested by airctl passes suggest (predicted step, see the comments)",
                  "passes:"]
    names: dict[tuple[str, int], str] = {}
    slugs: dict[int, str] = {}
    taken = set(taken or ())
    for r, s in enumerate(assign):
        if not s:
            continue
        slug = _slug(regions[r])
        while slug in slugs.values() or any(t.startswith(slug) for t in taken):
            slug += "_"
        slugs[r] = slug
        region = regions[r]
        names[("scope", r)] = f"{slug}-on-{streams[s]}"
        lines += [f"  # {notes.get(r, '')}", f"  - name: {names[('scope', r)]}", "    kind: stream_scope", *at,
                  f"    stream: {streams[s]}", f"    select: {_flow(region.selector)}", *_each_line(region.each),
                  "    record: true"]
    for r, choice in sorted(syncs.records.items()):
        names[("inputs", r)] = f"{slugs[r]}-inputs-ready"
        lines += [f"  # on the main stream, after the last producer of what {regions[r].key} reads",
                  f"  - name: {names[('inputs', r)]}", "    kind: record", *at, f"    after: {_flow(choice.raw)}",
                  *_each_line(choice.each)]
    used = set(taken)
    for w in syncs.waits:
        base = f"{slugs[w.region]}-waits-inputs" if w.why == "inputs" else f"wait-for-{slugs[w.region]}"
        name = base
        while name in used:
            name += "_"
        used.add(name)
        what = (f"{regions[w.region].key} waits for its inputs from other streams" if w.why == "inputs"
                else f"the main stream waits for {regions[w.region].key} before its first reader")
        targets = [names[o] for o in w.on]
        lines += [f"  # {what}", f"  - name: {name}", "    kind: wait", *at, f"    before: {_flow(w.choice.raw)}",
                  *_each_line(w.choice.each), f"    on: {targets[0] if len(targets) == 1 else json.dumps(targets)}"]
    return "\n".join(lines) + "\n"


def merge(user_text: str, passes_text: str, header: list[str]) -> str | None:
    """The user's file with the suggested passes appended to its ``passes:`` list, comments kept;
    None when ``passes:`` is not its last top-level key (then the caller writes the data instead)."""
    lines = user_text.rstrip("\n").splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"passes\s*:\s*(#.*)?$", line)), None)
    if start is None:
        return None
    rest = lines[start + 1:]
    if any(line and not line[0].isspace() and not line.startswith(("#", "-")) for line in rest):
        return None
    item = next((line for line in rest if line.lstrip().startswith("- ")), "  - ")
    indent = len(item) - len(item.lstrip())
    shift = indent - 2
    added = [(" " * shift + line) if shift >= 0 else line[-shift:] for line in passes_text.splitlines()]
    return "\n".join([*lines, "", *[f"{' ' * indent}# {h}" for h in header], *added]) + "\n"
