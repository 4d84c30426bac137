"""Change detection: did a pass change the graph? ("print after change", peers.md §10)

A fingerprint taken around the pass says whether it changed anything (``facts["changed"]``): the
runner's digest of the object (:class:`~airctl.instrument.PassRunner`: FX nodes' names, targets,
arguments; a GE graph's serialized proto), else a fingerprint of every node of the graph read
(name, op, inputs, control inputs, attributes, stream). YAML passes also get the names they
inserted and removed. Later instruments read ``facts["fingerprint_before"]`` /
``facts["fingerprint"]`` instead of hashing again.
"""

from __future__ import annotations

import hashlib
import json

from airctl.graph.model import Graph
from airctl.instrument import PassRun


def fingerprint(graph: Graph) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps([[n.name, n.op, n.inputs, n.control_inputs, n.attrs, n.stream] for n in graph.nodes],
                        default=str, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


class ChangeDetection:
    def before_pass(self, run: PassRun) -> None:
        assert run.before is not None
        run.facts["fingerprint_before"] = run.digest_before or fingerprint(run.before)

    def after_pass(self, run: PassRun) -> None:
        assert run.before is not None and run.after is not None
        fp = run.digest_after or fingerprint(run.after)
        run.facts["fingerprint"] = fp
        run.facts["changed"] = fp != run.facts["fingerprint_before"]
        if run.kind == "yaml" and run.facts["changed"]:
            names_before = {n.name for n in run.before.nodes}
            names_after = {n.name for n in run.after.nodes}
            run.facts["inserted"] = [n.name for n in run.after.nodes if n.name not in names_before]
            run.facts["removed"] = [n.name for n in run.before.nodes if n.name not in names_after]
        elif run.kind == "yaml":
            run.facts["inserted"], run.facts["removed"] = [], []

    def after_pass_failed(self, run: PassRun, error: BaseException) -> None:
        run.facts["changed"] = None
