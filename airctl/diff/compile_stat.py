"""GE's own compile statistics (``ge_config.export_compile_stat``, GE's ``ge.exportCompileStat``),
read and set beside the assignment report.

With the option at 1 or 2 (2 is TorchAir's default) GE writes ``fusion_result.json`` into the working
directory of the process that compiled: per session and graph, each fusion pass that matched and
how often it took effect::

    {"session_and_graph_id_0_1": {"graph_fusion": {"MatMulBiasAddFusionPass": {"match_times": "1",
                                                                               "effect_times": "1"}},
                                  "ub_fusion": {"AutomaticUbFusion": {"match_times": "2", "effect_times": "2"}}}}

airctl looks for it in the run's ledger folder, then beside the model script. The cross-check: GE
says it fused (any ``effect_times`` above 0) exactly when the run's GE graphs lost ops between the
first and the last GE stage (the assignment report's "fused away"). Under sim no GE runs and no
file is written: the check says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airctl.errors import LedgerError
from airctl.ledger.reader import Ledger
from airctl.limits import COMPILE_STAT_BYTES
from airctl.safe_files import read_json

STAT_FILE = "fusion_result.json"


def find_stat(led: Ledger) -> Path | None:
    """The run's ``fusion_result.json``: in the ledger folder, else beside the model script."""
    model = (led.index.model or {}).get("path") if isinstance(led.index.model, dict) else None
    for folder in (led.root, Path(model).parent if model else None):
        if folder is not None and (folder / STAT_FILE).is_file():
            return folder / STAT_FILE
    return None


def read_stat(path: Path) -> dict[str, dict[str, int]]:
    """``{graph key: {"match": n, "effect": n, "passes": n}}``; a file that is not GE's format is an
    error naming the file."""
    doc = read_json(path, COMPILE_STAT_BYTES, STAT_FILE,
                    too_large="GE writes a few KiB; is this GE's fusion_result.json?",
                    unreadable="set ge_config.export_compile_stat and compile again, or remove the file")
    if not isinstance(doc, dict):
        raise LedgerError(f"{STAT_FILE} is not an object of graphs", file=str(path),
                          hint="GE's file maps session_and_graph_id_* to graph_fusion / ub_fusion")
    out: dict[str, dict[str, int]] = {}
    for key, graph in doc.items():
        if not isinstance(graph, dict):
            continue
        row = {"match": 0, "effect": 0, "passes": 0}
        for kind in ("graph_fusion", "ub_fusion"):
            for stats in (graph.get(kind) or {}).values() if isinstance(graph.get(kind), dict) else ():
                if isinstance(stats, dict):
                    row["passes"] += 1
                    row["match"] += _count(stats.get("match_times"))
                    row["effect"] += _count(stats.get("effect_times"))
        out[str(key)] = row
    return out


def _count(value: Any) -> int:
    try:
        return max(int(str(value)), 0)
    except ValueError:
        return 0


def cross_check(led: Ledger, fused_away: int, backend: str | None) -> dict[str, Any]:
    """GE's statistics against the ops the run's GE stages lost (``fused_away``)."""
    path = find_stat(led)
    if path is None:
        why = ("absent: under sim no GE compiles, so GE writes no statistics" if backend == "sim"
               else f"absent: no {STAT_FILE} in the ledger or beside the model (ge_config.export_compile_stat "
                    "0, or the file was left in another working directory: copy it into the ledger)")
        return {"file": None, "status": "absent", "note": why}
    graphs = read_stat(path)
    effect = sum(g["effect"] for g in graphs.values())
    agree = (effect > 0) == (fused_away > 0)
    note = (f"GE applied {effect} fusion(s) in {len(graphs)} graph(s); the run's GE stages lost {fused_away} op(s): "
            + ("consistent" if agree else "they differ (a GE stage not dumped, or the file is another run's)"))
    return {"file": str(path), "status": "agree" if agree else "differ", "graphs": graphs, "effect": effect,
            "fused_away": fused_away, "note": note}
