"""What a ledger writer keeps in memory of the snapshots it wrote: enough for the report and for
content-addressed sharing, little for the garbage collector.

A snapshot is handed to the background writer as a graph; once encoded it is kept only as its JSON
text (ten times smaller than the graph's objects, and nothing for a full collection to walk while
TorchAir goes on compiling). Stages whose graph has a content key the graph id had already refer to
that stage's files (:meth:`Snapshots.shared`). A file the disk could not take is forgotten.

The graphs are read back at the run's end only: by the report's draft, the findings and the report
itself, each of which reads every snapshot. A graph decoded once is kept for the others, up to
:data:`DECODED_NODES` nodes in all (a 32-layer apply's six snapshots decoded 19 times, about 1.5 s
of JSON, before; beyond the budget a snapshot is decoded each time, as the memory of a run with
many large stages would otherwise hold every one of them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

from airctl.graph.model import Graph
from airctl.io.json_io import from_dict, write_json

Files = tuple[str, "str | None"]  # (snapshot file, text file), ledger-relative
DECODED_NODES = 200_000  # nodes of decoded snapshots kept for the run's end (about 0.3 GB at most)


class Snapshots:
    def __init__(self) -> None:
        self._graphs: dict[str, Graph] = {}  # ledger-relative snapshot file -> its graph, until encoded
        self._encoded: dict[str, str] = {}  # ledger-relative snapshot file -> the JSON text written there
        self._content: dict[tuple[str, str], Files] = {}  # (graph id, content key) -> its files
        self._decoded: dict[str, Graph] = {}  # ledger-relative snapshot file -> its graph, decoded (run's end)
        self._decoded_nodes = 0

    def keep(self, file: str, graph: Graph) -> None:
        """``graph`` is being written to ``file`` (in the background: :meth:`encode` is called there)."""
        self._graphs[file] = graph

    def encode(self, file: str, graph: Graph) -> str:
        """The snapshot's JSON text (on the background writer's thread); kept in place of the graph."""
        text = write_json(graph, compact=True)  # defaults left out, no derived edges (docs/graph-json.md)
        self._encoded[file] = text
        self._graphs.pop(file, None)
        return text

    def written(self, file: str) -> Graph | None:
        """The graph written to ``file``, or None when this writer did not write it."""
        graph = self._graphs.get(file)  # the encoder stores the text before it drops the graph
        if graph is not None:
            return graph
        graph = self._decoded.get(file)
        if graph is not None:
            return graph
        text = self._encoded.get(file)
        if text is None:
            return None
        graph = from_dict(json.loads(text), file)
        if self._decoded_nodes + len(graph.nodes) <= DECODED_NODES:  # the graphs read are shared: never mutated
            self._decoded[file] = graph
            self._decoded_nodes += len(graph.nodes)
        return graph

    def shared(self, graph_id: str, key: str | None) -> Files | None:
        return self._content.get((graph_id, key)) if key else None

    def remember(self, graph_id: str, key: str | None, files: Files) -> None:
        if key:
            self._content[(graph_id, key)] = files

    def forget(self, lost: set[str]) -> None:
        """Files that never reached the disk: no stage may refer to them again."""
        self._graphs = {f: g for f, g in self._graphs.items() if f not in lost}
        self._encoded = {f: t for f, t in self._encoded.items() if f not in lost}
        self._decoded = {f: g for f, g in self._decoded.items() if f not in lost}
        self._content = {k: v for k, v in self._content.items() if v[0] not in lost}

    @property
    def pending(self) -> int:
        """Snapshots kept as graphs: handed to the background writer and not encoded yet."""
        return len(self._graphs)

    def view(self) -> Mapping[str, Graph]:
        return _Written(self)


class _Written(Mapping[str, Graph]):
    """The snapshots written, by ledger-relative file; decoded on access."""

    def __init__(self, snaps: Snapshots) -> None:
        self._snaps = snaps
        graphs = list(snaps._graphs)  # first: the encoder adds a file's text before it drops the graph
        self._files = list(dict.fromkeys([*graphs, *list(snaps._encoded)]))

    def __getitem__(self, file: str) -> Graph:
        graph = self._snaps.written(file)
        if graph is None:
            raise KeyError(file)
        return graph

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)
