"""Rank divergence: the first collective where the ranks of a multi-rank run disagree.

Collectives pair up by issue order: every rank of a group must issue the same collective (kind,
shape, dtype, group) at the same position, or the run hangs until a timeout, aborts (gloo on a
size mismatch) or — worst — computes wrong numbers without a word (two different call sites with
the same signature pair up). tlparse's multi-rank report compares the ranks' compile ids and
Inductor's collective schedules; TorchAir has no Inductor schedule, so airctl compares what it
has, for every rank of a multi-rank ledger (docs/multi-rank.md):

- **compiled**: the graphs each rank compiled (their count and ids) and, per graph, the
  collectives of its ``fx-final`` stage in graph order, with the stream each is on;
- **issued**: each rank's collective log (``ranks/<rank>/collectives.jsonl``), the collectives
  in the order the rank issued them at run time (compiled graphs and airctl's eager reference).

Point-to-point ops (send/recv) differ between ranks by design (``if rank == 0: send``) and are left
out. Each difference is a :class:`~airctl.verify.findings.Finding` with rule ``rank_divergence``
naming the position, and per rank the graph, node, collective and stream.

>>> from airctl.ledger.collectives import Collective
>>> a = Collective(0, "graph_1", "all_reduce", "op", "all_reduce", "default", [4, 2], "float32", "0", "graph", 0.0)
>>> b = Collective(0, "graph_1", "all_gather", "op", "all_gather", "default", [4, 2], "float32", "0", "graph", 0.0)
>>> first_issued_difference({0: [a], 1: [b]}).position
0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.graph.roles import collective_kind
from airctl.ledger.collectives import LOG_FILE, Collective, read_log
from airctl.ledger.defaults import Request
from airctl.ledger.reader import Ledger
from airctl.modes import Mode
from airctl.verify.findings import Finding

RULE = "rank_divergence"
P2P = ("send", "recv")
HINT = ("every rank must issue the same collectives in the same order (same kind, shape, dtype, group and "
        "stream): look for rank-dependent branches (`if rank == ...`) and data-dependent control flow around "
        "the collectives, and for graphs only some ranks compile")


@dataclass
class Difference:
    """The first position where the ranks' sequences differ; ``at[rank]`` is None past a rank's end."""

    position: int
    at: dict[int, Any]  # rank -> Collective (issued) or CompiledCollective, None: the rank has none there
    where: str  # "issued" or "graph <id>"

    def message(self) -> str:
        parts = [f"rank {r} " + (c.describe() if c is not None else "issues nothing (its sequence ended)")
                 for r, c in sorted(self.at.items())]
        what = "issued at run time" if self.where == "issued" else f"of {self.where}"
        return f"ranks diverge at collective #{self.position} {what}: " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"position": self.position, "where": self.where,
                "ranks": {str(r): (c.to_json() if c is not None else None) for r, c in sorted(self.at.items())},
                "message": self.message()}


def _first(sequences: dict[int, list[Any]], where: str) -> Difference | None:
    if len(sequences) < 2:
        return None
    longest = max(len(s) for s in sequences.values())
    for i in range(longest):
        at = {r: (s[i] if i < len(s) else None) for r, s in sequences.items()}
        if len({c.signature() if c is not None else None for c in at.values()}) > 1:
            return Difference(i, at, where)
    return None


def first_issued_difference(issued: dict[int, list[Collective]]) -> Difference | None:
    """The first issued collective (point-to-point left out) on which the ranks disagree."""
    return _first({r: [c for c in cs if c.kind not in P2P] for r, cs in issued.items()}, "issued")


# -- compiled graphs ------------------------------------------------------------------------------
@dataclass
class CompiledCollective:
    graph: str
    node: str
    op: str
    kind: str
    stream: str | None
    shape: list[Any] | None
    dtype: str | None

    def signature(self) -> tuple[Any, ...]:
        return self.kind, tuple(self.shape or ()), self.dtype, self.stream

    def describe(self) -> str:
        shape = "x".join(map(str, self.shape)) if self.shape else "?"
        return (f"{self.kind} [{shape}] {self.dtype} (graph {self.graph}, node {self.node}, "
                f"stream {self.stream or 'default'})")

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def compiled_collectives(rank_ledger: Path) -> dict[str, list[CompiledCollective]]:
    """Per graph of a rank's ledger, the collectives of its check stage (fx-final), graph order."""
    ledger = Ledger.open(rank_ledger)
    out: dict[str, list[CompiledCollective]] = {}
    for gid in ledger.graph_ids():
        stage = ledger.default_stage(Request.CHECK, gid)
        if stage is None:
            continue
        graph = ledger.load(stage)
        rows = []
        for node in graph.nodes:
            kind = collective_kind(node.op)
            if kind is None or kind in P2P:
                continue
            source = graph.get(node.inputs[0]) if node.inputs else None  # the tensor it sends, as the log says
            tensors = (source.meta if source is not None else node.meta).get("tensors") or [{}]
            rows.append(CompiledCollective(gid, node.name, node.op, kind, node.stream, tensors[0].get("shape"),
                                           tensors[0].get("dtype")))
        out[gid] = rows
    return out


def compiled_differences(per_rank: dict[int, dict[str, list[CompiledCollective]]],
                         mode: Mode = Mode.MAX_AUTOTUNE) -> list[Finding]:
    """Graphs only some ranks compiled, and the first differing collective of each shared graph (findings of
    ``mode``, the run's)."""
    findings: list[Finding] = []
    if len(per_rank) < 2:
        return findings
    all_ids = list(dict.fromkeys(g for graphs in per_rank.values() for g in graphs))
    for gid in all_ids:
        have = sorted(r for r, graphs in per_rank.items() if gid in graphs)
        if len(have) != len(per_rank):
            missing = sorted(set(per_rank) - set(have))
            findings.append(_finding(
                f"graph {gid} was compiled by rank(s) {', '.join(map(str, have))} only, not by "
                f"{', '.join(map(str, missing))}: the ranks took different paths through the script "
                "(a hang or a mismatched collective follows when the graph holds collectives)",
                [c.node for r in have for c in per_rank[r][gid]][:4], f"ranks/{have[0]}/{gid}", mode))
            continue
        diff = _first({r: graphs[gid] for r, graphs in per_rank.items()}, f"graph {gid}")
        if diff is not None:
            first = next(c for c in diff.at.values() if c is not None)
            findings.append(_finding(diff.message(), [c.node for c in diff.at.values() if c is not None],
                                     f"ranks/*/{first.graph}", mode))
    return findings


def issued_sequences(top: Path, ranks: list[int]) -> dict[int, list[Collective]]:
    return {r: read_log(top / "ranks" / str(r) / LOG_FILE).issued for r in ranks}


def check_ranks(top: Path, ranks: list[int], mode: Mode) -> list[Finding]:
    """Every divergence of a multi-rank ledger: compiled graphs, then the issued sequence."""
    per_rank = {r: compiled_collectives(top / "ranks" / str(r)) for r in ranks
                if Ledger.is_ledger(top / "ranks" / str(r))}
    findings = compiled_differences(per_rank, mode)
    issued = first_issued_difference(issued_sequences(top, ranks))
    if issued is not None:
        findings.append(_finding(issued.message(), [c.node for c in issued.at.values() if c is not None and c.node],
                                 "ranks", mode))
    return findings


def _finding(message: str, nodes: list[str], graph: str, mode: Mode) -> Finding:
    return Finding(RULE, "error", mode, message, nodes=nodes, hint=HINT, graph=graph)
