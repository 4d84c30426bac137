"""Snapshot: every pass leaves a ledger stage (the graph, its readable text when it changed, the facts).

The first instrument of a capture's runner, so its after-hook runs last (after-hooks run in
reverse): it writes what the runner measured and the other instruments found
(``seconds``, ``changed``, ``inserted``/``removed``, ``eager_check``, ``returned_new_graph``, a YAML
pass's ``placements``/``applied_placements``, and
the caller's ``pass_kind``/``yaml_line``/``skipped``) into stage ``run.stage`` of graph
``run.graph_id``; a failed pass leaves ``failed:<name>`` with its first error line. An unchanged
pass shares its predecessor's files, and a pass that brings back a graph seen before shares that
stage's (the ledger writer decides, by the change detection's fingerprint); the readable text is
generated only for a snapshot that is written.
"""

from __future__ import annotations

from typing import Any

from airctl.instrument import Instrument, PassRun
from airctl.io.listing import fx_code, ge_ops_text

# facts copied into the stage, in this order (the rest are for instruments only)
STAGE_FACTS = ("pass_kind", "yaml_line", "inserted", "removed", "skipped", "returned_new_graph", "eager_check",
               "placements", "applied_placements")


class Snapshot(Instrument):
    def __init__(self, ledger: Any, known_graph: Any = None, texts: bool = True) -> None:
        self.ledger = ledger
        self.known_graph = known_graph or (lambda gid: True)  # only graphs the capture opened get stages
        self.texts = texts  # write each snapshot's readable text (``--capture minimal`` does not)

    def _text(self, run: PassRun) -> str:
        return ge_ops_text(run.after) if run.kind == "ge" else fx_code(run.obj)

    def after_pass(self, run: PassRun) -> None:
        if not self.known_graph(run.graph_id):
            return
        facts = run.facts
        extra = {k: facts[k] if k in facts else run.info[k] for k in STAGE_FACTS if k in facts or k in run.info}
        text = (lambda: self._text(run)) if run.changed and self.texts else None
        self.ledger.add_stage(run.graph_id, run.stage, run.after, text=text, changed=run.changed,
                              seconds=run.seconds, content_key=run.fingerprint, **extra)

    def after_pass_failed(self, run: PassRun, error: BaseException) -> None:
        if not self.known_graph(run.graph_id):
            return
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        self.ledger.add_stage(run.graph_id, run.failed_stage, run.after, text=lambda: self._text(run), changed=None,
                              seconds=run.seconds, error=first)
