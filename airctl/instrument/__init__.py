"""One pass runner; instruments observe every pass it runs, and passes never know (style.md §7).

Every FX pass of a compile — TorchAir's built-ins, seen through its observer, and each YAML pass
— and every GE pass goes through :meth:`PassRunner.run`, which reads the graph the pass receives,
calls the instruments, runs the pass, reads the graph it left and calls them again::

    before_pass(run)              run.before: the graph the pass receives
    after_pass(run)               run.after: the graph it left (mutated in place); run.result
    after_pass_failed(run, e)     the pass raised e; run.after is the graph as it left it

before-hooks in the order the instruments were given, after-hooks in reverse (MLIR's
``PassInstrumentor``): instruments nest like a stack, so the first one given sees the pass last,
with everything the inner ones found. Between them only typed fields of :class:`PassRun` pass:
what the runner itself measures — ``seconds``, and change detection (``fingerprint_before``,
``fingerprint``, ``changed``; YAML passes' ``inserted``/``removed``) — is set before any after-hook
runs, so no instrument depends on another for it; what an instrument finds has a field of its own
(``eager_check``, ``returned_new_graph``), which the snapshot instrument, given first, writes into
the ledger stage.

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

import hashlib
import json
import time
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
    before: Graph | None = None
    after: Graph | None = None
    result: Any = None
    digest_before: str | None = None  # the reader's digest of obj before / after the pass (None: no digest)
    digest_after: str | None = None
    # measured by the runner, before any after-hook
    seconds: float | None = None  # the pass's own time
    fingerprint_before: str | None = None  # the digest, else change.fingerprint of the graph read
    fingerprint: str | None = None  # after the pass
    changed: bool | None = None  # None: the pass failed
    inserted: list[str] | None = None  # YAML passes: node names the pass added
    removed: list[str] | None = None  # ... and took away
    # found by instruments
    eager_check: dict[str, Any] | None = None  # EagerCheck: the graph's outputs before vs after
    returned_new_graph: str | None = None  # ReturnedGraph: the type a custom pass returned instead of None
    placements: list[Any] | None = None  # the pass itself (a YAML pass with placements): where it could apply
    applied_placements: list[Any] | None = None  # ... and where it did (airctl bisect narrows them)

    @property
    def failed_stage(self) -> str:
        return f"failed:{self.name}"

    @property
    def facts(self) -> dict[str, Any]:
        """What is known of this run (the fields above that are set), by name."""
        return {k: getattr(self, k) for k in FACTS if getattr(self, k) is not None}


FACTS = ("seconds", "fingerprint_before", "fingerprint", "changed", "inserted", "removed", "eager_check",
         "returned_new_graph", "placements", "applied_placements")


class Instrument(Protocol):
    """The three hooks; an instrument that names this class as its base gets those it leaves out doing nothing."""

    def before_pass(self, run: PassRun) -> None:
        return None

    def after_pass(self, run: PassRun) -> None:
        return None

    def after_pass_failed(self, run: PassRun, error: BaseException) -> None:
        return None


def fingerprint(graph: Graph) -> str:
    """A graph's content: every node's name, op, inputs, control inputs, attributes and stream."""
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps([[n.name, n.op, n.inputs, n.control_inputs, n.attrs, n.stream] for n in graph.nodes],
                        default=str, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


def detect_change(run: PassRun) -> None:
    """Did the pass change the graph ("print after change", peers.md §10)? The runner's digest of the
    object around the pass (FX nodes' names, targets, arguments; a GE graph's serialized proto), else
    the :func:`fingerprint` of the graph read; YAML passes also get the names inserted and removed."""
    assert run.before is not None and run.after is not None
    run.fingerprint = run.digest_after or fingerprint(run.after)
    run.changed = run.fingerprint != run.fingerprint_before
    if run.kind == "yaml" and run.changed:
        names_before = {n.name for n in run.before.nodes}
        names_after = {n.name for n in run.after.nodes}
        run.inserted = [n.name for n in run.after.nodes if n.name not in names_before]
        run.removed = [n.name for n in run.before.nodes if n.name not in names_after]
    elif run.kind == "yaml":
        run.inserted, run.removed = [], []


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
        run.fingerprint_before = run.digest_before or fingerprint(run.before)
        for inst in self.instruments:
            inst.before_pass(run)
        self.running.append(run)
        t0 = time.perf_counter()
        try:
            run.result = fn(run)
        except StopAfterPass:
            self._after(run, t0, read, digest)
            raise
        except BaseException as error:
            run.seconds = round(time.perf_counter() - t0, 6)
            run.after, run.digest_after = self.read_graph(obj, run.graph_id, read, digest)
            for inst in reversed(self.instruments):
                inst.after_pass_failed(run, error)
            raise
        finally:
            self.running.remove(run)
        self._after(run, t0, read, digest)
        return run

    def _after(self, run: PassRun, t0: float, read: Reader | None, digest: Digest | None) -> None:
        run.seconds = round(time.perf_counter() - t0, 6)
        run.after, run.digest_after = self.read_graph(run.obj, run.graph_id, read, digest)
        detect_change(run)
        for inst in reversed(self.instruments):
            inst.after_pass(run)

    def is_running(self, name: str) -> bool:
        return any(r.name == name for r in self.running)

    def rows(self) -> list[dict[str, Any]]:
        """Findings the instruments made (those that keep any), for ``index.json``."""
        return [row for inst in self.instruments if hasattr(inst, "rows") for row in inst.rows()]
