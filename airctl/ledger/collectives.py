"""A rank's collective log: every collective its compiled graphs issue, written before it is issued.

``ranks/<rank>/collectives.jsonl`` in a multi-rank ledger (docs/multi-rank.md). One JSON object
per line, flushed as it is written, so the log survives a rank that hangs in a collective or is
killed (gloo aborts the process on a size mismatch). Events:

- ``{"ev": "graph", "graph", "phase": "start"|"end", "t"}`` around each run of a compiled graph;
- ``{"ev": "issue", "seq", "graph", "node", "op", "kind", "stream", "shape", "dtype", "group",
  "by", "t"}`` before a collective is issued (``seq`` counts the rank's collectives from 0,
  ``by`` is ``graph`` for the compiled graph on the executor, ``eager reference`` for airctl's
  eager check of it);
- ``{"ev": "done", "seq", "t"}`` once the call returned; ``{"ev": "wait", "seq", "node",
  "stream", "phase": "start"|"end", "t"}`` around the ``wait_tensor`` that blocks until a
  collective completed.

``t`` is seconds since the epoch. :func:`read_log` reads a log back as :class:`RankActivity`:
the issued sequence, and where the rank was last seen (:meth:`RankActivity.last`).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "collectives.jsonl"
>>> log = CollectiveLog(path)
>>> seq = log.issue(graph="graph_1", node="all_reduce", op="_c10d_functional.all_reduce.default",
...                 kind="all_reduce", stream="default", shape=[4, 16], dtype="float32", group="0")
>>> log.done(seq); log.close()
>>> activity = read_log(path)
>>> [(c.seq, c.kind, c.completed) for c in activity.issued]
[(0, 'all_reduce', True)]
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from airctl.limits import COLLECTIVE_LOG_BYTES
from airctl.safe_files import read_regular

LOG_FILE = "collectives.jsonl"
GRAPH = "graph"
COLLECTIVE_WAIT_OP = "_c10d_functional.wait_tensor.default"
EAGER_REFERENCE = "eager reference"


def call_details(args: Any, kwargs: Any) -> dict[str, Any]:
    """``shape``, ``dtype`` and ``group`` of a collective call, from its arguments: the first tensor
    (anything with a shape and a dtype), and the group c10d names (the last string argument) or
    TorchAir's ``npu_define`` tag with its rank list.

    >>> class T: shape, dtype = (4, 16), "torch.float32"
    >>> call_details((T(), "sum", "0"), {})
    {'shape': [4, 16], 'dtype': 'float32', 'group': '0'}
    """
    tensor = _first_tensor(args)
    strings = [a for a in args if isinstance(a, str)]
    ranks = next((a for a in args if isinstance(a, list) and a and all(isinstance(r, int) for r in a)), None)
    if ranks is not None and strings:
        group: str | None = f"{strings[-1]} ranks={ranks}"
    else:
        group = strings[-1] if strings else kwargs.get("group_name")
    return {"shape": [int(d) if str(d).isdigit() else str(d) for d in tensor.shape] if tensor is not None else None,
            "dtype": str(tensor.dtype).removeprefix("torch.") if tensor is not None else None, "group": group}


def _first_tensor(value: Any) -> Any:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return value
    if isinstance(value, (list, tuple)):
        for v in value:
            found = _first_tensor(v)
            if found is not None:
                return found
    return None


class CollectiveLog:
    """Appends events to one rank's log (thread-safe: every stream of the executor writes here)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = None
        self._lock = threading.Lock()
        self._seq = 0

    def _write(self, event: dict[str, Any]) -> None:
        event["t"] = round(time.time(), 6)
        line = json.dumps(event, default=str) + "\n"
        with self._lock:
            if self._file is None:  # opened on first use: the rank's ledger folder exists by then
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("a", encoding="utf-8")
            self._file.write(line)
            self._file.flush()

    def issue(self, *, graph: str, node: str, op: str, kind: str, stream: str, shape: list[Any] | None = None,
              dtype: str | None = None, group: str | None = None, by: str = GRAPH) -> int:
        """Record a collective about to be issued; returns its sequence number."""
        with self._lock:
            seq, self._seq = self._seq, self._seq + 1
        self._write({"ev": "issue", "seq": seq, "graph": graph, "node": node, "op": op, "kind": kind,
                     "stream": stream, "shape": shape, "dtype": dtype, "group": group, "by": by})
        return seq

    def done(self, seq: int) -> None:
        self._write({"ev": "done", "seq": seq})

    def wait(self, seq: int | None, node: str, stream: str, phase: str) -> None:
        self._write({"ev": "wait", "seq": seq, "node": node, "stream": stream, "phase": phase})

    def graph(self, graph: str, phase: str) -> None:
        self._write({"ev": "graph", "graph": graph, "phase": phase})

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


@dataclass
class Collective:
    """One issued collective, as a rank's log recorded it."""

    seq: int
    graph: str | None
    node: str | None
    op: str | None
    kind: str | None
    stream: str | None
    shape: list[Any] | None
    dtype: str | None
    group: str | None
    by: str
    t: float
    completed: bool = False
    waited: bool = False  # a wait_tensor on it returned

    def signature(self) -> tuple[Any, ...]:
        """What must be equal on every rank at the same position (send/recv pair up as one kind)."""
        kind = "send/recv" if self.kind in ("send", "recv") else self.kind
        return kind, tuple(self.shape or ()), self.dtype, self.group, self.stream

    def describe(self) -> str:
        shape = "x".join(map(str, self.shape)) if self.shape else "?"
        if self.by == GRAPH:
            where = f"graph {self.graph}, node {self.node}, stream {self.stream or 'default'}"
        else:  # airctl's eager check runs the Dynamo graph node by node, on no stream
            where = f"{self.by} of {self.graph}, node {self.node}"
        return f"{self.kind} [{shape}] {self.dtype} group {self.group} ({where})"

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class RankActivity:
    """What a rank's log says: the collectives in issue order, and the last thing it was doing."""

    issued: list[Collective] = field(default_factory=list)
    events: int = 0
    last_graph: dict[str, Any] | None = None  # the latest graph start/end event
    open_waits: dict[tuple[Any, Any], dict[str, Any]] = field(default_factory=dict)  # (seq, node) -> start

    def feed(self, lines: list[str]) -> None:
        """Add events (JSON lines) in the order written."""
        by_seq = {c.seq: c for c in self.issued[-64:]}  # done/wait events follow their issue closely
        for line in lines:
            try:
                event = json.loads(line)
            except (ValueError, RecursionError):
                continue  # the rank died while writing it (or the line is no event of ours: nested too deep)
            if not isinstance(event, dict) or "ev" not in event:
                continue
            event.setdefault("t", 0.0)
            self.events += 1
            seq, ev = event.get("seq"), event["ev"]
            if ev == "issue" and isinstance(seq, int):
                c = Collective(seq, event.get("graph"), event.get("node"), event.get("op"), event.get("kind"),
                               event.get("stream"), event.get("shape"), event.get("dtype"), event.get("group"),
                               event.get("by", GRAPH), event["t"])
                by_seq[seq] = c
                self.issued.append(c)
            elif ev == "done" and seq in by_seq:
                by_seq[seq].completed = True
            elif ev == "wait" and event.get("phase") == "start":
                self.open_waits[(seq, event.get("node"))] = event
            elif ev == "wait" and event.get("phase") == "end":
                self.open_waits.pop((seq, event.get("node")), None)
                if seq in by_seq:
                    by_seq[seq].waited = True
            elif ev == "graph":
                self.last_graph = event

    def last(self, now: float | None = None) -> dict[str, Any] | None:
        """Where the rank was last seen: ``blocked`` in a collective or a wait for one (with
        ``since_s``), else the last graph it ran and its last collective; None for an empty log."""
        if not self.events:
            return None
        now = time.time() if now is None else now
        graph = self.last_graph
        out: dict[str, Any] = {"graph": graph["graph"] if graph else None,
                               "in_graph": bool(graph and graph.get("phase") == "start")}
        target: Collective | None = None
        pending = next((c for c in reversed(self.issued) if not c.completed), None)
        if self.open_waits:
            wait = max(self.open_waits.values(), key=lambda e: e["t"])
            target = next((c for c in reversed(self.issued) if c.seq == wait.get("seq")), None)
            out.update(state="blocked", node=wait.get("node"), op=COLLECTIVE_WAIT_OP, stream=wait.get("stream"),
                       since_s=round(now - wait["t"], 3))
        elif pending is not None:
            target = pending
            out.update(state="blocked", node=pending.node, op=pending.op, stream=pending.stream,
                       since_s=round(now - pending.t, 3))
        elif self.issued:
            target = self.issued[-1]
            out.update(state="running" if out["in_graph"] else "outside compiled graphs", node=target.node,
                       op=target.op, stream=target.stream)
        else:
            out.update(state="running" if out["in_graph"] else "outside compiled graphs")
        if target is not None:
            out.update(collective=target.seq, collective_graph=target.graph, describe=target.describe())
            if out.get("state") == "blocked":  # the graph the blocking collective belongs to
                out["graph"] = target.graph if target.by == GRAPH else f"{target.by} of {target.graph}"
        return out


def read_log(path: Path | str) -> RankActivity:
    """A rank's log read back (a missing file is an empty log; a torn last line is ignored)."""
    activity = RankActivity()
    path = Path(path)
    if path.is_file():
        raw = read_regular(path, COLLECTIVE_LOG_BYTES, what="rank's collective log",
                           hint="a rank logs a few hundred bytes a collective; the file was replaced or damaged")
        activity.feed(raw.decode("utf-8", errors="replace").splitlines())
    return activity


class LogFollower:
    """Reads a rank's log as it grows (the watchdog polls it): only new complete lines each time."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.activity = RankActivity()
        self._offset = 0

    def poll(self) -> RankActivity:
        try:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return self.activity
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next poll
        if end:
            self._offset += end
            self.activity.feed(data[:end].decode("utf-8", errors="replace").splitlines())
        return self.activity
