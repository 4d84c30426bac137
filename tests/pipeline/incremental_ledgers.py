"""What two ledgers must share for an incremental apply to be the full apply's (tests/pipeline/test_incremental*.py).

:func:`view` reads a ledger into what the run found and wrote — every graph's stages (name,
dialect, node count, changed, delta, the YAML passes' records), each stage's snapshot and text,
the findings, the execution, and the dumps (kind, stage, graph, and the contents with the
process id and time stamp TorchAir puts in their names taken out) — leaving out what differs
between any two runs: times, run ids, the process, paths of the ledger itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from airctl.io.compressed import read_bytes

_STAGE_SKIP = {"seconds", "elapsed", "file", "text", "index"}
_STAMP = re.compile(r"_pid_\d+_ts_\d+|pid_\d+|ts_\d{20}")


def _stamped(text: str, root: Path) -> str:
    return _STAMP.sub("<stamp>", text.replace(str(root.resolve()), "<ledger>").replace(str(root), "<ledger>"))


def view(root: Path) -> dict[str, Any]:
    index = json.loads((root / "index.json").read_text())
    graphs = []
    for g in index["graphs"]:
        stages = []
        for s in g["stages"]:
            row = {k: v for k, v in s.items() if k not in _STAGE_SKIP}
            row["snapshot"] = json.loads(_stamped(read_bytes(root / s["file"]).decode(), root))
            row["text"] = read_bytes(root / s["text"]).decode() if s.get("text") else None
            stages.append(row)
        graphs.append({**{k: _stamped(str(v), root) for k, v in g.items() if k != "stages"}, "stages": stages})
    dumps = []
    for d in index.get("dumps") or []:
        content = read_bytes(root / d["file"]).decode("utf-8", "replace") if d.get("file") else None
        dumps.append({**{k: _stamped(str(v), root) for k, v in d.items() if k not in ("bytes",)},
                      "content": _stamped(content, root) if content is not None else None})
    execution = dict(index.get("execution") or {})
    captures = [{k: v for k, v in c.items() if k != "seq"} for c in index.get("captures") or []]
    return {"status": index["status"], "mode": index["mode"], "graphs": graphs, "dumps": dumps,
            "findings": index.get("findings"), "fixed_findings": index.get("fixed_findings"),
            "first_stage_with_finding": index.get("first_stage_with_finding"),
            "execution": execution, "events": index.get("events"), "captures": captures,
            "error": index.get("error"), "error_detail": index.get("error_detail"),
            "warnings": index.get("warnings"), "notes": index.get("notes"),
            "torchair_warnings": index.get("torchair_warnings"), "options": index.get("options")}


def compared(root_a: Path, root_b: Path) -> list[str]:
    """Where the ledgers at ``root_a`` and ``root_b`` differ (empty: equal)."""
    return differences(json.loads(_stamped(json.dumps(view(root_a)), root_a)),
                       json.loads(_stamped(json.dumps(view(root_b)), root_b)))


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two views differ (empty: equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            out += differences(a.get(k), b.get(k), f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items vs {len(b)}"]
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += differences(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [f"{path}: {str(a)[:200]!r} vs {str(b)[:200]!r}"]


def compile_fresh(model: Path, out: Path, incremental: bool, **settings: Any) -> Any:
    """One in-process compile as a fresh process runs it: TorchAir numbers its graphs per process
    (``graph_1`` ...) and these tests compile several in one, so its counters start again."""
    import sys

    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    for name in ("torchair.npu_fx_compiler", "npugraph_ex.npu_fx_compiler"):
        module = sys.modules.get(name)
        if module is not None:
            module._GLOBAL_GRAPH_ID = 0
    return compile_model(CompileRequest.of(model, out_dir=out, backend="sim", incremental=incremental, **settings))
