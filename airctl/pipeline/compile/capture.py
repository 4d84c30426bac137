"""Capture every stage of a TorchAir compile into a ledger.

A :class:`CaptureSession` listens to TorchAir while a compile runs (``with observing(session):``,
:mod:`airctl.hooks.capture`; the Dynamo-level wrapper :func:`capturing_backend` adds the Dynamo
graph) and turns each event into a ledger stage. Every FX and GE pass runs through its one
:class:`~airctl.instrument.PassRunner` — TorchAir's built-in passes through the observer, YAML
passes through the composed hooks, which are given the same runner — with these instruments, in
order: timing, change detection, the returned-graph check (R11), the eager check, the caller's
(verify-each), and the snapshot that writes the stage. A TorchAir pass named in ``torchair_off``
(``airctl bisect``, :mod:`airctl.hooks.pass_switch`) is not run and leaves no stage.

Stages per graph (graph id ``<k>-<kind>``, k = Dynamo graph number, kind forward / backward /
inference)::

    dynamo, aot-<kind>, after:<fx pass> ..., fx-final, ge-original, ge:after:<ge pass> ...,
    ge-optimized[, ge-build]  (max-autotune; ge-build: GE's automatic multi-stream, sim/ge_build.py)
    dynamo, aot-<kind>, after:<fx pass> ..., fx-final, after:<aclgraph pass> ...  (reduce-overhead,
                                                                                  npugraph_ex)

npugraph_ex's captures (first, recaptures with their reason, capture-limit fallbacks) become rows of
``index.json`` ``captures`` (:meth:`CaptureSession.aclgraph_capture`); TorchAir's ``cache_compile``
decisions rows of ``events`` (:meth:`CaptureSession.cache_event`, ``airctl why``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from airctl.aside import Aside
from airctl.graph.ge_built import BUILD_STAGE
from airctl.graph.model import Graph
from airctl.hooks.pass_switch import skipped_by_observer
from airctl.instrument import Instrument, PassRunner
from airctl.instrument.snapshot import Snapshot
from airctl.instrument.stack import pass_instruments
from airctl.io.fx_reader import read_fx
from airctl.io.ge_proto import ge_digest, graph_from_ge_proto
from airctl.io.listing import fx_code, ge_ops_text
from airctl.ledger.writer import LedgerWriter, Text
from airctl.modes import Capture, Mode
from airctl.pipeline.compile.why_events import cache_event, link_graphs

GE_STAGE_NAMES = {"original_ge_graph": "ge-original", "optimized_ge_graph": "ge-optimized"}


def _read_ge(ge: Any, graph_id: str) -> Graph:
    return graph_from_ge_proto(getattr(ge, "_proto", ge))


def _ge_digest(ge: Any) -> str:
    return ge_digest(getattr(ge, "_proto", ge))


class CaptureSession:
    """Listens to one compile (or one script's compiles) and keeps its ledger."""

    def __init__(self, ledger: LedgerWriter, instruments: Sequence[Instrument] = (),
                 extra_dump_types: Sequence[str] = (), capture: Capture = Capture.DEFAULT,
                 final_dump_types: Sequence[str] = (),
                 torchair_off: Sequence[str] = (), keep_dynamo_graphs: bool = False) -> None:
        self.ledger = ledger
        self.torchair_off = set(torchair_off)  # TorchAir passes not to run (airctl bisect)
        self.skipped: list[dict[str, str]] = []  # the passes left out: {"graph", "pass"}
        self.keep_dynamo_graphs = keep_dynamo_graphs
        self.dynamo_graphs: list[tuple[Any, list[Any]]] = []  # (GraphModule, real example inputs) when kept
        self.extra_dump_types = list(extra_dump_types)
        self.final_dump_types: list[str] = list(final_dump_types)
        self._aside: list[tuple[Aside, Callable[[bool], Any]]] = []
        self.capture = capture
        self.texts = capture is not Capture.MINIMAL  # readable text beside each snapshot
        self.compress_log = True  # Run.finish gzips log.txt once the run is over
        self.mode = ledger.run_index.run_mode or Mode.MAX_AUTOTUNE
        self.dynamo_count = 0
        self.current: str | None = None
        self._training = False
        self._pending_dynamo: tuple[Graph, str] | None = None
        self._open_training: list[str] = []
        # (graph id, TorchAir's concrete graph), held weakly: torch._dynamo.reset() must still free a
        # graph the script let go of (TorchAir releases its GE resources when the graph is deleted)
        self.concrete_graphs: list[tuple[str, Callable[[], Any]]] = []
        self.keeper: Any = None  # an incremental compile's Keeper (pipeline/incremental/keep.py)
        self.caller_instruments = list(instruments)
        snapshot = Snapshot(ledger, known_graph=lambda gid: gid == self.current and gid is not None, texts=self.texts)
        self.runner = PassRunner(pass_instruments(self.mode, snapshot=snapshot, callers=self.caller_instruments),
                                 graph_id=lambda: self.current)

    def add_instruments(self, instruments: Sequence[Instrument]) -> None:
        """More instruments, inside the snapshot (``airctl run`` learns the mode from the script)."""
        self.caller_instruments.extend(instruments)
        self.runner.instruments[1:1] = list(instruments)

    def findings(self) -> list[dict[str, Any]]:
        return self.runner.rows()

    def _text(self, make: Callable[[], str]) -> Text:
        """A stage's readable text, made only if the stage writes a new snapshot and the level keeps texts."""
        return make if self.texts else None

    # -- Dynamo and AOT ------------------------------------------------------------------------
    def dynamo_graph(self, gm: Any, example_inputs: Sequence[Any]) -> None:
        import torch

        self.dynamo_count += 1
        self._training = torch.is_grad_enabled() and any(
            isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs
        )
        self._pending_dynamo = (read_fx(gm, f"dynamo_{self.dynamo_count}"), fx_code(gm) if self.texts else None)
        if self.keeper is not None:
            self.keeper.dynamo_graph(gm, list(example_inputs), self._training)
        if self.keep_dynamo_graphs:  # airctl repro: the graph, and the values it was compiled for
            self.dynamo_graphs.append((gm, [t.detach().clone() if isinstance(t, torch.Tensor) else t
                                            for t in example_inputs]))

    def aot_graph(self, gm: Any, phase: str) -> None:
        if self.keeper is not None:
            self.keeper.aot_graph(gm, phase)
        k = self.dynamo_count
        if phase == "backward":
            gid = self._open_training.pop() if self._open_training else f"{k}-forward"
            gid = gid.replace("-forward", "-backward")
            kind = "backward"
        else:
            kind = "forward" if self._training else "inference"
            gid = f"{k}-{kind}"
            if kind == "forward":
                self._open_training.append(gid)
        self.ledger.graph(gid, kind, dynamo_graph=k)
        self.current = gid
        if kind != "backward" and self._pending_dynamo is not None:
            graph, text = self._pending_dynamo
            self.ledger.add_stage(gid, "dynamo", graph, text=text)
            self._pending_dynamo = None
        graph, digest = self.runner.read_graph(gm, gid)
        self.ledger.add_stage(gid, f"aot-{kind}", graph, text=self._text(lambda: fx_code(gm)), content_key=digest)

    # -- passes --------------------------------------------------------------------------------
    def _switched_off(self, name: str) -> bool:
        if not self.torchair_off or not skipped_by_observer(name, self.torchair_off):
            return False
        self.skipped.append({"graph": self.current or "graph", "pass": name})
        return True

    def run_fx_pass(self, name: str, gm: Any, run: Callable[[], Any]) -> Any:
        if self._switched_off(name):
            return None
        return self.runner.run(name, gm, lambda _run: run()).result

    def run_ge_pass(self, name: str, ge: Any, run: Callable[[], Any]) -> Any:
        if self._switched_off(name):
            return None
        return self.runner.run(name, ge, lambda _run: run(), stage=f"ge:after:{name}", kind="ge",
                               read=_read_ge, digest=_ge_digest).result

    def dumped_fx_pass(self, name: str, gm: Any) -> None:
        """A pass TorchAir reports only by dumping its result (the aclgraph passes)."""
        if self.current is None:
            return
        graph, fp = self.runner.read_graph(gm, self.current)
        last = self.ledger.last_stage(self.current)
        previous = last.fingerprint if last is not None else None
        changed = None if previous is None else fp != previous
        self.ledger.add_stage(self.current, f"after:{name}", graph, changed=changed, fingerprint=fp, content_key=fp,
                              text=self._text(lambda: fx_code(gm)) if changed is not False else None)

    def final_fx(self, concrete: Any, gm: Any) -> None:
        name = getattr(getattr(concrete, "graph", None), "name", None) or getattr(concrete, "fx_graph_name", None)
        if self.current is None:
            return
        if name is not None:
            self.ledger.update_graph(self.current, name=name)
        self.concrete_graphs.append((self.current, _ref(concrete)))
        graph, fp = self.runner.read_graph(gm, self.current)
        self.ledger.add_stage(self.current, "fx-final", graph, text=self._text(lambda: fx_code(gm)), fingerprint=fp,
                              content_key=fp)

    # -- GE ------------------------------------------------------------------------------------
    def ge_stage(self, file_name: str, ge: Any) -> None:
        if self.current is None:
            return
        graph, digest = self.runner.read_graph(ge, self.current, read=_read_ge, digest=_ge_digest)
        stage = GE_STAGE_NAMES.get(file_name, f"ge:{file_name}")
        self.ledger.add_stage(self.current, stage, graph, text=self._text(lambda: ge_ops_text(graph)),
                              content_key=digest)
        # the FX graph is converted: only the GE graph is read from now on; once optimized, nothing
        self.runner.forget(self.current, keep=None if stage == "ge-optimized" else ge)

    def ge_build(self, graph_name: str, graph: Graph) -> None:
        """GE's build allocated the graph's streams (automatic multi-stream): its last GE stage."""
        gid = self.graph_ids_by_name().get(graph_name) or self.current
        if gid is not None:
            self.ledger.add_stage(gid, BUILD_STAGE, graph, text=self._text(lambda: ge_ops_text(graph)))

    def torchair_dump(self, path: Path, graph_name: str | None) -> Path | None:
        """TorchAir wrote a dump: replaced by its gzip-compressed copy (``<name>.gz``) and listed.
        Returns the listed path (None when it was listed already or is not there)."""
        name = path.name
        stage = "ge-optimized" if name.startswith("dynamo_optimized") else "ge-original"
        if path.suffix == ".py" and self._is_acl():
            stage = "aclgraph-optimized" if name.startswith("dynamo_optimized") else "aclgraph-original"
        if self.ledger.dump_entry(path.with_name(name + ".gz")) is not None or not path.is_file():
            return None
        listed = self.ledger.compress_file(path)
        self.ledger.add_dump(listed, graph=graph_name, type=path.suffix.lstrip("."), stage=stage,
                             written_by="torchair")
        return listed

    def aclgraph_capture(self, graph_name: str, event: dict[str, Any]) -> None:
        """npugraph_ex captured, recaptured or fell back to eager (:mod:`airctl.hooks.npugraph_ex_observers`):
        one row of ``index.json`` ``captures``, with the ledger's graph id."""
        row = {"graph": self.graph_ids_by_name().get(graph_name, graph_name), "graph_name": graph_name, **event,
               "seq": self.ledger.elapsed()}
        self.ledger.set(captures=[*(self.ledger.run_index.captures or []), row])

    def cache_event(self, event: dict[str, Any]) -> None:
        """TorchAir's ``cache_compile`` decided (:mod:`airctl.hooks.lazy_compiled_model`): one row of
        ``events``, compared with earlier runs (:func:`.why_events.cache_event`)."""
        if event.get("kind") in ("cache_miss", "cache_invalidated"):
            event["dynamo_graph"] = self.dynamo_count + 1
        cache_event(self.ledger, event)

    def _concretes(self) -> Iterator[tuple[str, Any]]:
        """The concrete graphs still alive, with their graph ids."""
        for gid, ref in self.concrete_graphs:
            concrete = ref()
            if concrete is not None:
                yield gid, concrete

    def _is_acl(self) -> bool:
        return any(type(c).__name__ == "AclConcreteGraph" for _, c in self._concretes())

    def graph_ids_by_name(self) -> dict[str, str]:
        """TorchAir graph name (``graph_1``) -> ledger graph id (``1-inference``)."""
        ids: dict[str, str] = {}
        for gid, concrete in self._concretes():
            name = getattr(getattr(concrete, "graph", None), "name", None)
            if not isinstance(name, str):
                name = getattr(concrete, "fx_graph_name", None)
            if isinstance(name, str):
                ids[name] = gid
        return ids

    def aside(self, job: Callable[[], Any], then: Callable[[bool], Any]) -> None:
        """Run ``job`` now in a forked child (:mod:`airctl.aside`); :meth:`finalize` waits
        for it and calls ``then(succeeded)``."""
        self._aside.append((Aside(job), then))

    @property
    def waiting(self) -> bool:
        """Jobs set aside are still running (:meth:`finalize` will wait for them)."""
        return bool(self._aside)

    def finalize(self) -> None:
        """Wait for the jobs set aside (the optimized GE graph's pbtxt) and collect TorchAir's generated
        aclgraph code (reduce-overhead) into ``torchair/``."""
        link_graphs(self.ledger)
        asides, self._aside = self._aside, []
        for aside, then in asides:
            then(aside.wait())
        for gid, concrete in self._concretes():
            code = getattr(concrete, "fx_forward", None)
            if type(concrete).__name__ != "AclConcreteGraph" or not isinstance(code, str):
                continue
            name = getattr(concrete, "fx_graph_name", gid)
            rel = f"torchair/output_code_{name}.py.gz"
            if self.ledger.dump_entry(self.ledger.root / rel) is not None:
                continue
            path = self.ledger.write_file(rel, lambda code=code: code)
            self.ledger.add_dump(path, graph=name, type="py", stage="generated-code", written_by="torchair")


def capturing_backend(backend: Any, session: CaptureSession) -> Any:
    """Wrap a TorchAir Dynamo backend so each Dynamo graph is captured before TorchAir sees it."""

    def backend_with_capture(gm: Any, example_inputs: Sequence[Any], **kwargs: Any) -> Any:
        session.dynamo_graph(gm, example_inputs)
        compiled = backend(gm, example_inputs, **kwargs)
        return session.keeper.wrap_compiled(compiled) if session.keeper is not None else compiled

    # Dynamo names the backend by ``__name__`` in its messages ("Backend compiler `X` failed"): TorchAir's
    # name, never this wrapper's
    backend_with_capture.__name__ = backend_name(backend)
    return backend_with_capture


def backend_name(backend: Any) -> str:
    """The name Dynamo would give ``backend`` itself (a function's, a partial's function's, else its class's).

    >>> import functools
    >>> backend_name(functools.partial(print, sep=""))
    'print'
    """
    inner = getattr(backend, "func", backend)  # functools.partial: TorchAir's get_npu_backend
    return str(getattr(inner, "__name__", None) or type(backend).__name__)


def _ref(obj: Any) -> Callable[[], Any]:
    """A weak reference to ``obj`` (a strong one for an object that takes none)."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj
