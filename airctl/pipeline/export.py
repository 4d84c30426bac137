"""``airctl export tlparse RUN``: a ledger as torch's structured trace log, so ``tlparse`` renders it.

tlparse is what PyTorch users already open for ``TORCH_TRACE``; TorchAir writes nothing there
itself (its FX passes and GE graphs are only in its own log and dumps). The export gives each
ledger graph a compile id (frame = its Dynamo graph number - 1; forward and backward share it,
as in torch) and writes, per graph: ``dynamo_start``, the Dynamo graph as
``dynamo_output_graph``, the AOT graph as ``aot_<kind>_graph``, every other stage that changed the
graph as ``graph_dump`` named ``torchair_<stage>`` (FX code or listing as the ledger has it; GE
stages as pbtxt), the verifier's findings as the ``airctl_findings`` artifact and one
``compilation_metrics`` record (node counts). A ledger of several ranks gives one log per rank
(``dedicated_log_torch_trace_rank_<R>_airctl.log``), as torch names them, for
``tlparse --all-ranks-html``.

>>> result = export_tlparse(Path("airctl-runs/<run-id>"))       # doctest: +SKIP
>>> result.files                                                 # doctest: +SKIP
[PosixPath('airctl-runs/<run-id>/torch_trace/dedicated_log_torch_trace_airctl.log')]
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.io.read import write_graph
from airctl.io.torch_trace import Compile, write_trace
from airctl.ledger.index import GraphEntry
from airctl.ledger.reader import Ledger, stage_path
from airctl.ledger.run_folder import slug


@dataclass
class ExportResult:
    files: list[Path]
    graphs: int
    records: int
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"files": [str(f) for f in self.files], "graphs": self.graphs, "records": self.records,
                "notes": self.notes}


def _stage_payload(ledger: Ledger, stage: Any) -> str | None:
    """FX stages as the ledger's text (FX code or listing); GE stages as pbtxt, TorchAir's own dump format."""
    if stage.dialect == "ge":
        return write_graph(ledger.load(stage), "pbtxt").rstrip("\n")
    if stage.text:
        path = stage_path(ledger.root, stage.text, stage.name)  # index.json is untrusted: not outside the ledger
        if path.is_file():
            from airctl.io.compressed import read_bytes

            return read_bytes(path).decode("utf-8", errors="replace").rstrip("\n")
    return write_graph(ledger.load(stage), "json").rstrip("\n")


def _compile_for(ledger: Ledger, entry: GraphEntry, frame: int) -> Compile:
    c = Compile(frame_id=frame, rank=entry.rank)
    if entry.kind != "backward":
        c.add("dynamo_start", {"stack": []})
    last_fx_nodes = None
    for ref in ledger.stages(entry.id):
        if ref.entry.changed is False:
            continue  # the same graph as the stage before it
        payload = _stage_payload(ledger, ref)
        if ref.name == "dynamo":
            c.add("dynamo_output_graph", {"sizes": {}}, payload)
        elif ref.name.startswith("aot-"):
            c.add(f"aot_{ref.name[len('aot-'):]}_graph", {}, payload)
        else:
            c.add("graph_dump", {"name": f"torchair_{slug(ref.name.replace(':', '_'))}"}, payload)
        if ref.dialect == "fx":
            last_fx_nodes = ref.entry.nodes
    findings = [f for f in ledger.index.findings if f.get("graph") == entry.id]
    if findings:
        c.add("artifact", {"name": "airctl_findings", "encoding": "json"}, json.dumps(findings, indent=1))
    if entry.kind != "backward":
        model = (ledger.index.model or {}).get("path") or ledger.index.command or "airctl"
        c.add("compilation_metrics", {"compile_id": f"{frame}/0", "co_name": entry.id, "co_filename": str(model),
                                      "co_firstlineno": 0, "graph_node_count": last_fx_nodes,
                                      "fail_type": None, "fail_reason": ledger.index.error})
    return c


def export_tlparse(source: Path | str, out: Path | str | None = None) -> ExportResult:
    """Write the TORCH_TRACE log(s) of ledger ``source`` into ``out`` (default ``<ledger>/torch_trace``)."""
    ledger = Ledger.open(source)
    target = Path(out) if out is not None else ledger.root / "torch_trace"
    created = ledger.index.created or ""
    try:
        stamp = _dt.datetime.fromisoformat(created)
    except ValueError:
        stamp = _dt.datetime(2000, 1, 1)
    when = (stamp.month, stamp.day, stamp.hour * 3600 + stamp.minute * 60 + stamp.second)
    by_rank: dict[int | None, list[Compile]] = {}
    for i, entry in enumerate(ledger.index.graphs):
        frame = (entry.dynamo_graph or i + 1) - 1
        by_rank.setdefault(entry.rank, []).append(_compile_for(ledger, entry, frame))
    header = [({"artifact": {"name": "airctl_ledger", "encoding": "json"}},
               json.dumps({"run_id": ledger.index.run_id, "command": ledger.index.command, "mode": ledger.index.mode,
                           "created": ledger.index.created, "ledger": str(ledger.root.absolute())}, indent=1))]
    if ledger.index.report:
        header.append(({"link": {"name": "airctl report.html", "url": str((ledger.root / ledger.index.report)
                                                                            .absolute().as_uri())}}, None))
    ranks = [r for r in by_rank if r is not None]
    files, records = [], 0
    for rank, compiles in by_rank.items():
        name = (f"dedicated_log_torch_trace_rank_{rank}_airctl.log" if len(ranks) > 1 and rank is not None
                else "dedicated_log_torch_trace_airctl.log")
        pid = next((e.pid for e in ledger.index.graphs if e.rank == rank and e.pid), 0) or 0
        files.append(write_trace(target / name, compiles, header=header, when=when, pid=pid))
        records += len(header) + sum(len(c.entries) for c in compiles)
    if not by_rank:
        files.append(write_trace(target / "dedicated_log_torch_trace_airctl.log", [], header=header, when=when))
        records += len(header)
    return ExportResult(files, len(ledger.index.graphs), records)
