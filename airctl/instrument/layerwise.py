"""Layer-by-layer compare around one pass: where does the graph it left part from the one it got?

``airctl bisect`` (numerics) names the pass that changes a model's results; this instrument then
says where inside the graph. Around the pass named ``pass_name`` it runs the graph the pass
received and the graph it left node by node on the same inputs (real tensors made from the
placeholders' metadata, as the eager check makes them) and keeps the first node whose value
differs, with its source line (:func:`airctl.execute.divergence.first_divergence`), in
:attr:`found` — one entry per graph the pass ran on. A graph that cannot run eagerly (symbolic
shapes, an op with no CPU kernel) gets ``{"skipped": why}`` instead.
"""

from __future__ import annotations

from typing import Any

from airctl.execute.compare import DEFAULT_ATOL
from airctl.instrument import PassRun


def placeholder_inputs(gm: Any) -> list[Any] | None:
    """Real inputs shaped like ``gm``'s placeholders (their ``meta["val"]``); None when one is unknown."""
    from airctl.instrument.eager_check import real_inputs

    vals = [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"]
    if any(v is None for v in vals):
        return None
    return real_inputs(vals)


class LayerwiseCompare:
    def __init__(self, pass_name: str, atol: float = DEFAULT_ATOL) -> None:
        self.pass_name = pass_name
        self.atol = atol
        self.found: list[dict[str, Any]] = []
        self._before: Any = None
        self._inputs: list[Any] | None = None

    def before_pass(self, run: PassRun) -> None:
        if run.name != self.pass_name:
            return
        from airctl.execute.divergence import run_nodes

        self._before = None
        self._inputs = placeholder_inputs(run.obj)
        if self._inputs is None:
            self.found.append({"graph": run.graph_id, "skipped": "symbolic or unknown input shapes"})
            return
        try:
            self._before = run_nodes(run.obj, self._inputs)
        except Exception as e:  # noqa: BLE001 - a check that cannot run must not break the compile
            self.found.append({"graph": run.graph_id, "skipped": f"{type(e).__name__}: {e}"[:200]})

    def after_pass(self, run: PassRun) -> None:
        if run.name != self.pass_name or self._before is None or self._inputs is None:
            return
        from airctl.execute.divergence import first_divergence, run_nodes

        try:
            after = run_nodes(run.obj, self._inputs)
        except Exception as e:  # noqa: BLE001
            self.found.append({"graph": run.graph_id, "skipped": f"{type(e).__name__}: {e}"[:200]})
            return
        divergence = first_divergence(self._before, after, self.atol)
        self.found.append({"graph": run.graph_id, "pass": run.name, "divergence": divergence})
        self._before = None

    def after_pass_failed(self, run: PassRun, error: BaseException) -> None:
        self._before = None
