"""The one rule for which stage of a ledger a command reads when the user names none.

Every command that reads a ledger stage without ``--stage``/``--from``/``--to`` asks
:func:`default_stage` with what it is doing (a :class:`StageRequest`); the table is in
docs/ledger.md ("Default stages") and the commands' ``--help`` repeats their line of it.

>>> from airctl.ledger.index import RunIndex
>>> index = RunIndex.from_json({"graphs": [{"id": "1-inference", "stages": [
...     {"index": i, "name": n, "file": f"{i}.json"} for i, n in
...     enumerate(["dynamo", "aot-inference", "fx-final", "ge-original", "ge-optimized"])]}]})
>>> default_stage(index, StageRequest(Request.DUMP, output_type="fx")).name
'fx-final'
>>> default_stage(index, StageRequest(Request.DIFF_FROM)).name
'aot-inference'
>>> default_stage(index, Request.REPORT).name   # no YAML pass ran: the final FX graph, not GE's
'fx-final'
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from airctl.ledger.index import RunIndex, StageRef

FX_FINAL = "fx-final"


class Request(str, enum.Enum):
    """What the stage is read for."""

    DUMP = "dump"  # airctl dump LEDGER
    DIFF_FROM = "diff --from"  # airctl diff LEDGER: the old side
    DIFF_TO = "diff --to"  # airctl diff LEDGER: the new side
    DIFF_SOURCE = "diff A B"  # airctl diff with two sources, either a ledger
    CHECK = "check"  # airctl check LEDGER: each graph
    PROFILE = "profile analyze --run"  # airctl profile analyze --run: each graph's nodes
    REPORT = "report.html"  # the stage the viewer opens on, each graph

    def __str__(self) -> str:
        return self.value


# dump --type -> the dialect it is written in (lanes: the stream plan with its scopes, before GE lowers it)
OUTPUT_DIALECTS = {"pbtxt": "ge", "txt": "ge", "fx": "fx", "lanes": "fx"}


@dataclass(frozen=True)
class StageRequest:
    """A request, with what narrows it: the output type (``dump --type``) or a dialect (``diff --to``:
    the dialect of the ``--from`` stage, so both sides are comparable)."""

    request: Request
    output_type: str | None = None
    dialect: str | None = None

    @property
    def wanted_dialect(self) -> str | None:
        return self.dialect or OUTPUT_DIALECTS.get(str(self.output_type))


def default_stage(index: RunIndex, request: StageRequest | Request, graph_id: str | None = None) -> StageRef | None:
    """The stage ``request`` reads from graph ``graph_id`` (default: the first graph); None when the
    graph has no stages at all."""
    req = request if isinstance(request, StageRequest) else StageRequest(request)
    if graph_id is None:
        if not index.graphs:
            return None
        graph_id = index.graphs[0].id
    stages = index.stages(graph_id)
    if not stages:
        return None
    fx = [s for s in stages if s.dialect == "fx"]
    final = next((s for s in stages if s.name == FX_FINAL), None)
    kind = req.request
    if kind is Request.DIFF_FROM:  # Dynamo's graph holds torch.* calls, AOT's ATen ops: start at AOT
        return next((s for s in stages if s.name.startswith("aot-")), stages[0])
    if kind is Request.CHECK:  # what TorchAir converts; the aclgraph passes after it add its own events
        return final or (fx[-1] if fx else stages[-1])  # GE only (an import of GE dumps): the last GE graph
    if kind is Request.PROFILE:
        return (fx or stages)[-1]
    if kind in (Request.DUMP, Request.DIFF_TO):
        want = req.wanted_dialect or ("fx" if kind is Request.DIFF_TO else None)
        same = [s for s in stages if s.dialect == want]
        if want == "fx" and kind is Request.DUMP and final is not None:
            return final
        return (same or stages)[-1]
    if kind is Request.REPORT:  # what the user came for: their passes' last stage, else the final FX graph
        from airctl.ledger.pass_window import user_pass_window

        window = user_pass_window(stages)
        if window is not None:
            return window.after
        return final or (fx[-1] if fx else stages[-1])
    return stages[-1]  # DIFF_SOURCE
