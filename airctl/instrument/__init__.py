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

Reading is the costly part at scale (a 6k-node graph takes a large fraction of a second to
read), so the runner *digests* the object around each pass (:func:`airctl.io.fx_reader.fx_digest`,
:func:`airctl.io.ge_proto.ge_digest`: ten times cheaper) and reads only a graph it has not seen:
it remembers the last graph read of each object with its digest (:meth:`PassRunner.read_graph`,
which the capture also uses for its own stages). A pass that changed nothing leaves
``run.after is run.before`` and ``run.digest_after == run.digest_before``; a chain of such passes
costs two digests each and no read. The graphs handed to instruments are shared: never mutate one.

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
Digest = Callable[[Any], str]
REMEMBERED = 8  # graphs the runner keeps (the latest per object): a compile works on one or two at a time


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
    digest_before: str | None = None  # the reader's digest of obj before / after the pass (None: no digest)
    digest_after: str | None = None

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


def _fx_digest(obj: Any) -> str:
    from airctl.io.fx_reader import fx_digest

    return fx_digest(obj)


_DEFAULT: Any = object()


class PassRunner:
    """Runs passes with instruments around each; ``graph_id`` says which graph is being compiled.

    ``read`` turns the object a pass works on into a graph; ``digest`` (default: the FX digest
    with the default FX reader, none with any other reader) fingerprints it cheaply."""

    def __init__(self, instruments: Sequence[Instrument] = (), graph_id: Callable[[], str | None] = lambda: None,
                 read: Reader = _read_fx, digest: Digest | None = _DEFAULT) -> None:
        self.instruments = list(instruments)
        self.graph_id = graph_id
        self.read = read
        self.digest = (_fx_digest if read is _read_fx else None) if digest is _DEFAULT else digest
        self.running: list[PassRun] = []  # passes in progress, outermost first (passes nest)
        self._known: dict[tuple[int, str], tuple[Any, str, Graph]] = {}  # (id(obj), graph id) -> (obj, digest, graph)

    def read_graph(self, obj: Any, graph_id: str, read: Reader | None = None,
                   digest: Digest | None = _DEFAULT) -> tuple[Graph, str | None]:
        """``obj`` as a graph, and its digest: the graph last read from ``obj`` when its digest is
        unchanged, else a fresh read (remembered). Without a digest function: always a read."""
        read = read or self.read
        digest = self.digest if digest is _DEFAULT else digest
        if digest is None:
            return read(obj, graph_id), None
        d = digest(obj)
        key = (id(obj), graph_id)
        known = self._known.get(key)
        if known is not None and known[0] is obj and known[1] == d:
            return known[2], d
        graph = read(obj, graph_id)
        self._known.pop(key, None)
        self._known[key] = (obj, d, graph)  # holding obj keeps its id from being reused
        while len(self._known) > REMEMBERED:
            del self._known[next(iter(self._known))]
        return graph, d

    def forget(self, graph_id: str, keep: Any = None) -> None:
        """Drop what the runner remembers of ``graph_id``'s objects (but ``keep``): a compile that
        moved on (FX -> GE, GE -> run) no longer needs them, and a 10k-node graph kept alive is
        that much more for every full garbage collection to walk. Forgetting costs at most a read."""
        for key in [k for k, (obj, _, _) in self._known.items() if k[1] == graph_id and obj is not keep]:
            del self._known[key]

    def run(self, name: str, obj: Any, fn: Callable[[PassRun], Any], *, stage: str | None = None,
            kind: str = "torchair", read: Reader | None = None, digest: Digest | None = _DEFAULT,
            **info: Any) -> PassRun:
        """Run ``fn(run)`` (the pass, mutating ``obj``) with every instrument around it; returns the run."""
        run = PassRun(self.graph_id() or "graph", name, stage or f"after:{name}", obj, kind, info)
        run.before, run.digest_before = self.read_graph(obj, run.graph_id, read, digest)
        for inst in self.instruments:
            inst.before_pass(run)
        self.running.append(run)
        try:
            run.result = fn(run)
        except StopAfterPass:
            self._after(run, read, digest)
            raise
        except BaseException as error:
            run.after, run.digest_after = self.read_graph(obj, run.graph_id, read, digest)
            for inst in self.instruments:
                inst.after_pass_failed(run, error)
            raise
        finally:
            self.running.remove(run)
        self._after(run, read, digest)
        return run

    def _after(self, run: PassRun, read: Reader | None, digest: Digest | None) -> None:
        run.after, run.digest_after = self.read_graph(run.obj, run.graph_id, read, digest)
        for inst in self.instruments:
            inst.after_pass(run)

    def is_running(self, name: str) -> bool:
        return any(r.name == name for r in self.running)

    def rows(self) -> list[dict[str, Any]]:
        """Findings the instruments made (those that keep any), for ``index.json``."""
        return [row for inst in self.instruments if hasattr(inst, "rows") for row in inst.rows()]
