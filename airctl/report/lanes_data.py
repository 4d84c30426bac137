"""The lane view of one snapshot, as the viewer's lane pane draws it (compact JSON, positions not names).

:func:`airctl.render.lanes.build_lanes` does the work; this module runs the verifier on the snapshot
(its findings are marked on the lanes, as ``airctl check`` would report them for that stage) and
writes the result with node *positions in the snapshot* instead of names::

    {streams: [group stream index per lane], lane: [per node, -1 = not drawn], row: [...], rows,
     bands: [[lane, top, bottom, enter, exit (-1: unclosed)]...], arrows: [src, dst, ...],
     races: [src, dst, ...], marks: [[node, severity, rule, message, primary 0/1]...],
     run: [per node, -1 = own row] and runs: [[lane, row, members, label]...] (folded only)}

A snapshot of :data:`~airctl.render.lanes.FOLD_LIMIT` nodes or more is folded by module (depth 2),
and the viewer unfolds a run when it is clicked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from airctl.graph.model import Graph
from airctl.modes import Mode
from airctl.render.lanes import FOLD_LIMIT, Lanes, build_lanes
from airctl.verify.findings import Finding

log = logging.getLogger("airctl")
MAX_MESSAGE = 500


def snapshot_findings(graph: Graph, mode: Mode) -> list[Finding]:
    """The verifier's findings for one snapshot; none when the verifier fails (the report still gets written)."""
    from airctl.verify import verify

    try:
        return verify(graph, Mode.MAX_AUTOTUNE if graph.dialect == "ge" else mode)
    except Exception:  # a debugging aid never breaks the report (style.md §9); logged for us
        log.exception("verifier failed on %s while writing the lane view", graph.name)
        return []


def lanes_json(graph: Graph, mode: Mode, stream_id: Callable[[str | None], int],
               findings: list[Finding] | None = None) -> dict[str, Any]:
    """``graph``'s lane view for the viewer; ``stream_id`` maps a stream to the group's stream index."""
    if findings is None:
        findings = snapshot_findings(graph, mode)
    fold = "module" if len(graph) >= FOLD_LIMIT else None
    view = build_lanes(graph, mode, findings, fold=fold)
    return to_json(view, stream_id)


def flat_pairs(pairs: list[tuple[int, int]]) -> list[int]:
    """``[(s, d), ...]`` as ``[s, d, ...]``: the viewer's compact form of node pairs."""
    return [i for pair in pairs for i in pair]


def to_json(view: Lanes, stream_id: Callable[[str | None], int]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "streams": [stream_id(s) for s in view.streams],
        "lane": view.lane,
        "row": view.row,
        "rows": view.rows,
        "bands": [[b.lane, b.top, b.bottom, b.enter, -1 if b.exit is None else b.exit] for b in view.bands],
        "arrows": flat_pairs(view.arrows),
        "races": flat_pairs(view.races),
        "marks": [[m.node, m.severity, m.rule, m.message[:MAX_MESSAGE], int(m.primary)] for m in view.marks],
    }
    if view.is_folded():
        keep = [k for k, run in enumerate(view.runs) if len(run.members) > 1]
        renum = {k: j for j, k in enumerate(keep)}
        out["run"] = [renum.get(r, -1) for r in view.run]
        out["runs"] = [[view.runs[k].lane, view.runs[k].row, view.runs[k].members, view.runs[k].label(view.graph)]
                       for k in keep]
    return out
