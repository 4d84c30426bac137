"""Instruments observe passes; passes never know (style.md §7, MLIR's PassInstrumentation).

The runner calls every instrument around every pass, in order::

    before_pass(name, graph)            the graph the pass receives
    after_pass(name, graph)             the graph it left (mutated in place)
    after_pass_failed(name, graph, e)   the pass raised; the graph is as it left it

``graph`` is airctl's :class:`~airctl.graph.model.Graph`, read from the live FX graph. The
ledger and console are passed to instruments that need them, never held in module globals.
"""

from __future__ import annotations

from typing import Protocol

from airctl.graph.model import Graph


class Instrument(Protocol):
    def before_pass(self, name: str, graph: Graph) -> None: ...

    def after_pass(self, name: str, graph: Graph) -> None: ...

    def after_pass_failed(self, name: str, graph: Graph, error: BaseException) -> None: ...
