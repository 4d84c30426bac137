"""One pass runner; instruments observe every pass it runs, and passes never know (style.md §7).

Every FX pass of a compile — TorchAir's built-ins, seen through its observer, and each YAML pass
— and every GE pass goes through :meth:`PassRunner.run`, which reads the graph the pass receives,
calls the instruments, runs the pass, reads the graph it left and calls them again::

    before_pass(run)              run.before: the graph the pass receives
    after_pass(run)               run.after: the graph it left (mutated in place); run.result
    after_pass_failed(run, e)     the pass raised e; run.after is the graph as it left it

in the order the instruments were given (so one that reports what others found goes last). A
:class:`PassRun` names its graph id and ledger stage explicitly and carries ``facts``, where
instruments leave what they found for the ones after them: timing (``seconds``), change
detection (``changed``, ``inserted``, ``removed``), the eager check (``eager_check``), a returned
new graph (``returned_new_graph``); the snapshot instrument writes them into the ledger stage.

>>> from airctl.graph.model import Graph, Node
>>> class Names:
...     def before_pass(self, run): print("before", run.name, len(run.before))
...     def after_pass(self, run): print("after", run.stage, len(run.after))
...     def after_pass_failed(self, run, error): print("failed", run.name, error)
>>> g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder")])
>>> runner = PassRunner([Names()], read=lambda obj, gid: obj)
>>> _ = runner.run("noop", g, lambda run: None)
before noop 1
after after:noop 1
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from airctl.graph.model import Graph

Reader = Callable[[Any, str], Graph]


class StopAfterPass(Exception):  # noqa: N818 - a signal, not an error
    """Raised by a pass that completed and asks the compile to stop (``--plan``): not a failure."""


@dataclass
class PassRun:
    """One run of one pass, as the instruments see it."""

    graph_id: str  # ledger graph id ("1-inference"); "graph" outside a capture
    name: str  # as the ledger names the pass: TorchAir's ("view_to_reshape") or "yaml:<name>"
    stage: str  # the ledger stage a successful run produces: "after:<name>", "yaml:<name>", "ge:after:<name>"
    obj: Any  # what the pass works on: a GraphModule, or a GE graph
    kind: str = "torchair"  # torchair | yaml | ge
    info: dict[str, Any] = field(default_factory=dict)  # from the caller: example_inputs, check_results, source...
    facts: dict[str, Any] = field(default_factory=dict)  # from the instruments, in the order they ran
    before: Graph | None = None
    after: Graph | None = None
    result: Any = None

    @property
    def failed_stage(self) -> str:
        return f"failed:{self.name}"


class Instrument(Protocol):
    def before_pass(self, run: PassRun) -> None: ...

    def after_pass(self, run: PassRun) -> None: ...

    def after_pass_failed(self, run: PassRun, error: BaseException) -> None: ...


def _read_fx(obj: Any, graph_id: str) -> Graph:
    from airctl.io.fx_reader import read_fx

    return read_fx(obj, graph_id)


class PassRunner:
    """Runs passes with instruments around each; ``graph_id`` says which graph is being compiled."""

    def __init__(self, instruments: Sequence[Instrument] = (), graph_id: Callable[[], str | None] = lambda: None,
                 read: Reader = _read_fx) -> None:
        self.instruments = list(instruments)
        self.graph_id = graph_id
        self.read = read
        self.running: list[PassRun] = []  # passes in progress, outermost first (passes nest)

    def run(self, name: str, obj: Any, fn: Callable[[PassRun], Any], *, stage: str | None = None,
            kind: str = "torchair", read: Reader | None = None, **info: Any) -> PassRun:
        """Run ``fn(run)`` (the pass, mutating ``obj``) with every instrument around it; returns the run."""
        read = read or self.read
        run = PassRun(self.graph_id() or "graph", name, stage or f"after:{name}", obj, kind, info)
        run.before = read(obj, run.graph_id)
        for inst in self.instruments:
            inst.before_pass(run)
        self.running.append(run)
        try:
            run.result = fn(run)
        except StopAfterPass:
            self._after(run, read)
            raise
        except BaseException as error:
            run.after = read(obj, run.graph_id)
            for inst in self.instruments:
                inst.after_pass_failed(run, error)
            raise
        finally:
            self.running.remove(run)
        self._after(run, read)
        return run

    def _after(self, run: PassRun, read: Reader) -> None:
        run.after = read(run.obj, run.graph_id)
        for inst in self.instruments:
            inst.after_pass(run)

    def is_running(self, name: str) -> bool:
        return any(r.name == name for r in self.running)

    def rows(self) -> list[dict[str, Any]]:
        """Findings the instruments made (those that keep any), for ``index.json``."""
        return [row for inst in self.instruments if hasattr(inst, "rows") for row in inst.rows()]
