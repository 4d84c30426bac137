"""Graph fingerprints: did a pass change the graph? ("print after change", peers.md §10)."""

from __future__ import annotations

import hashlib
import json

from airctl.graph.model import Graph


def fingerprint(graph: Graph) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps([[n.name, n.op, n.inputs, n.control_inputs, n.attrs, n.stream] for n in graph.nodes],
                        default=str, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()
