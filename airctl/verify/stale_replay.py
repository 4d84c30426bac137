"""Replays of a graph whose recapture check was switched off (rule ``stale_replay``, R21).

npugraph_ex recaptures a graph when the address of an input it mutates changes since the capture
(``AclGraph.is_need_to_recapture``: ``captured_mutated_inputs`` against each call's ``data_ptr()``).
Its option ``unsafe_skip_npugraph_capture_validation`` (torch-npu 2.13.0 wheel,
``npugraph_ex/configs/compiler_config.py``; "UNSAFE: skip the whole recapture check ... caller
guarantees no graph ever needs recapture") skips that check, so such a call replays the captured
kernels on the captured addresses: it reads stale inputs and writes where the caller no longer looks.

The run's observer (:func:`airctl.hooks.npugraph_ex_observers.stale_replay`, on sim's bookkeeping
and on an NPU alike) records each such call as a ``captures`` row ``stale_replay`` with the moved
inputs; this rule turns each row into a finding naming the call and the inputs that would have
made npugraph_ex recapture.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airctl.graph.model import Graph
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.rules import make_finding


def stale_findings(rows: list[dict[str, Any]], graphs: Mapping[str, Graph], mode: Mode) -> list[Finding]:
    """One finding per ``stale_replay`` row: the call, the graph's mutated inputs that moved."""
    found: list[Finding] = []
    for row in rows:
        if row.get("event") != "stale_replay":
            continue
        gid = str(row.get("graph"))
        graph = graphs.get(gid)
        inputs = [i for i in row.get("inputs") or [] if isinstance(i, int)]
        placeholders = [n.name for n in graph.nodes if n.kind == "placeholder"] if graph is not None else []
        nodes = [placeholders[i] for i in inputs if i < len(placeholders)]
        moved = ", ".join(nodes) or ", ".join(map(str, inputs))
        f = make_finding("stale_replay", Mode.parse(mode).semantics,
                         f"call {row.get('call')} of graph {gid} replays its capture (key {row.get('key')}) although "
                         f"mutated input(s) {moved} moved since: npugraph_ex would have recaptured here, but "
                         "unsafe_skip_npugraph_capture_validation skips the check, so the replay reads stale inputs",
                         nodes, graph)
        if f is None:
            continue
        if row.get("file") and row.get("line"):
            f.source = f"{row['file']}:{row['line']}"
        f.graph = gid
        found.append(f)
    return found
