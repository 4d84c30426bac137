"""Write torch's structured trace log (``TORCH_TRACE``), the file ``tlparse`` turns into its HTML pages.

One record per line: a glog prefix, then a JSON object; a record with a payload has
``has_payload`` (the md5 of the payload) and the payload follows, each line prefixed by a tab
(torch/_logging/_internal.py, torch 2.13)::

    V1123 13:33:46.982000 4242 airctl/io/torch_trace.py:1] {"graph_dump": {"name": "fx-final"}, "frame_id": 0, ...}
    \tclass GraphModule(torch.nn.Module):
    \t    def forward(self, arg0_1: "f32[3, 3]"):

The compile id (``frame_id``/``frame_compile_id``/``attempt``) groups records into tlparse's
folders (``-_<frame>_<compile>_<attempt>/``); ``rank`` names a rank. Entry kinds are tlparse's
(``dynamo_output_graph``, ``aot_*_graph``, ``graph_dump``, ``artifact``, ``compilation_metrics``,
``link``; meta-pytorch/tlparse ``src/types.rs``). Payload text is written as given.

>>> print(record({"artifact": {"name": "x", "encoding": "string"}}, "a\\nb", when=(1, 23, 0.0), pid=7))
V0123 00:00:00.000000 7 airctl/io/torch_trace.py:1] {"artifact": {"name": "x", "encoding": "string"}, \
"has_payload": "8cdeb44417f3c26826595d5820cf5700"}
\ta
\tb
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PATHNAME = "airctl/io/torch_trace.py"


def record(meta: dict[str, Any], payload: str | None = None, *, when: tuple[int, int, float] = (1, 1, 0.0),
           pid: int = 0) -> str:
    """One log record (without the final newline); ``when`` is (month, day, seconds into the day)."""
    meta = dict(meta)
    if payload is not None:
        meta["has_payload"] = hashlib.md5(payload.encode("utf-8")).hexdigest()  # noqa: S324 - tlparse's checksum
    month, day, seconds = when
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    stamp = f"{int(hours):02d}:{int(minutes):02d}:{int(secs):02d}.{int(round((secs % 1) * 1e6)) % 1000000:06d}"
    line = f"V{month:02d}{day:02d} {stamp} {pid} {PATHNAME}:1] {json.dumps(meta)}"
    if payload is not None:
        line += "".join(f"\n\t{text}" for text in payload.split("\n"))
    return line


@dataclass
class Compile:
    """The records of one compile id (one ledger graph, or one Dynamo frame)."""

    frame_id: int
    frame_compile_id: int = 0
    attempt: int = 0
    rank: int | None = None
    entries: list[tuple[dict[str, Any], str | None]] = field(default_factory=list)

    def ids(self) -> dict[str, Any]:
        ids: dict[str, Any] = {"frame_id": self.frame_id, "frame_compile_id": self.frame_compile_id,
                               "attempt": self.attempt}
        if self.rank is not None:
            ids["rank"] = self.rank
        return ids

    def add(self, kind: str, value: dict[str, Any], payload: str | None = None) -> None:
        self.entries.append(({kind: value}, payload))


def write_trace(path: Path, compiles: list[Compile], *, header: list[tuple[dict[str, Any], str | None]] = (),
                when: tuple[int, int, float] = (1, 1, 0.0), pid: int = 0) -> Path:
    """Write the records (``header`` first, with no compile id) to ``path``."""
    lines = [record(meta, payload, when=when, pid=pid) for meta, payload in header]
    for c in compiles:
        for meta, payload in c.entries:
            lines.append(record({**meta, **c.ids()}, payload, when=when, pid=pid))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
