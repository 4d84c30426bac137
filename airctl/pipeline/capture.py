"""Capture every stage of a TorchAir compile into a ledger.

A :class:`CaptureSession` is made active around a compile (``with session.active():``). Hooks
installed in TorchAir's own observer points (:mod:`~airctl.pipeline.patched_graph_transform_observer`,
:mod:`~airctl.pipeline.patched_concrete_graph`) and the Dynamo-level wrapper
(:func:`capturing_backend`) call into it; it turns each event into a ledger stage and runs the
instruments around each FX pass.

Stages per graph (graph id ``<k>-<kind>``, k = Dynamo graph number, kind forward / backward /
inference)::

    dynamo, aot-<kind>, after:<fx pass> ..., fx-final, ge-original, ge:after:<ge pass> ...,
    ge-optimized          (max-autotune)
    dynamo, aot-<kind>, after:<fx pass> ..., fx-final, after:<aclgraph pass> ...  (reduce-overhead)
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from airctl.graph.model import Graph
from airctl.instrument import Instrument
from airctl.instrument.fingerprint import fingerprint
from airctl.io.fx_reader import read_fx
from airctl.io.ge_proto import graph_from_ge_proto
from airctl.ledger.writer import LedgerWriter

log = logging.getLogger("airctl")
_active: list[CaptureSession] = []
_lock = threading.Lock()

GE_STAGE_NAMES = {"original_ge_graph": "ge-original", "optimized_ge_graph": "ge-optimized"}


def current_session() -> CaptureSession | None:
    return _active[-1] if _active else None


def fx_text(gm: Any) -> str:
    try:
        return gm.print_readable(False)
    except Exception:  # a half-built graph from a failed pass may not codegen
        return str(gm.graph)


def ge_text(graph: Graph) -> str:
    lines = []
    for n in graph.nodes:
        extra = f"  stream={n.stream}" if n.stream else ""
        ctrl = f"  ctrl=[{', '.join(n.control_inputs)}]" if n.control_inputs else ""
        lines.append(f"{n.name:<24} {n.op:<20} in=[{', '.join(n.inputs)}]{ctrl}{extra}")
    return "\n".join(lines) + "\n"


class CaptureSession:
    def __init__(self, ledger: LedgerWriter, instruments: Sequence[Instrument] = (),
                 extra_dump_types: Sequence[str] = ()) -> None:
        self.ledger = ledger
        self.instruments = list(instruments)
        self.extra_dump_types = list(extra_dump_types)
        self.dynamo_count = 0
        self.current: str | None = None
        self._training = False
        self._pending_dynamo: tuple[Graph, str] | None = None
        self._open_training: list[str] = []
        self._before: dict[str, str] = {}
        self.concrete_graphs: list[tuple[str, Any]] = []
        self.findings: list[dict[str, Any]] = []  # findings the runner itself makes (R11)
        self.mode = str(ledger.index.get("mode") or "max-autotune")

    @contextlib.contextmanager
    def active(self) -> Iterator[CaptureSession]:
        with _lock:
            _active.append(self)
        try:
            yield self
        finally:
            with _lock:
                _active.remove(self)

    # -- Dynamo and AOT ------------------------------------------------------------------------
    def dynamo_graph(self, gm: Any, example_inputs: Sequence[Any]) -> None:
        import torch

        self.dynamo_count += 1
        self._training = torch.is_grad_enabled() and any(
            isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs
        )
        self._pending_dynamo = (read_fx(gm, f"dynamo_{self.dynamo_count}"), fx_text(gm))

    def aot_graph(self, gm: Any, phase: str) -> None:
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
        self.ledger.add_stage(gid, f"aot-{kind}", read_fx(gm, gid), text=fx_text(gm))

    # -- FX passes -----------------------------------------------------------------------------
    def before_fx_pass(self, name: str, gm: Any) -> None:
        graph = read_fx(gm, self.current or "graph")
        self._before[name] = fingerprint(graph)
        for inst in self.instruments:
            inst.before_pass(name, graph)

    def after_fx_pass(self, name: str, gm: Any, seconds: float, result: Any) -> None:
        graph = read_fx(gm, self.current or "graph")
        changed = fingerprint(graph) != self._before.pop(name, None)
        extra: dict[str, Any] = {}
        if result is not None and result is not gm:
            extra["returned_new_graph"] = type(result).__name__
            self._returned_new_graph(name, result, changed)
        if self.current is not None:
            self.ledger.add_stage(self.current, f"after:{name}", graph, text=fx_text(gm) if changed else None,
                                  changed=changed,
                                  seconds=round(seconds, 6), **extra)
        for inst in self.instruments:
            inst.after_pass(name, graph)

    def _returned_new_graph(self, name: str, result: Any, changed: bool) -> None:
        try:
            from airctl.verify import finding_for_returned_graph
        except ImportError:
            return
        finding = finding_for_returned_graph(name, result, mode=self.mode, changed_in_place=changed)
        if finding is not None:
            row = finding.to_json()
            row.update(stage=f"after:{name}", graph=self.current)
            self.findings.append(row)

    def dumped_fx_pass(self, name: str, gm: Any) -> None:
        """A pass TorchAir reports only by dumping its result (the aclgraph passes)."""
        if self.current is None:
            return
        graph = read_fx(gm, self.current)
        stages = self.ledger._graphs[self.current]["stages"]
        previous = stages[-1]["fingerprint"] if stages and "fingerprint" in stages[-1] else None
        fp = fingerprint(graph)
        changed = None if previous is None else fp != previous
        self.ledger.add_stage(self.current, f"after:{name}", graph, text=fx_text(gm) if changed is not False else None,
                              changed=changed, fingerprint=fp)

    def fx_pass_failed(self, name: str, gm: Any, error: BaseException, seconds: float) -> None:
        if type(error).__name__ == "PlanStop":  # --plan stops TorchAir after this pass: it did not fail
            if fingerprint(read_fx(gm)) != self._before.get(name):  # the user's own post pass ran in it
                self.after_fx_pass(name, gm, seconds, None)
            return
        graph = read_fx(gm, self.current or "graph")
        if self.current is not None:
            self.ledger.add_stage(self.current, f"failed:{name}", graph, text=fx_text(gm), changed=None,
                                  seconds=round(seconds, 6), error=str(error).splitlines()[0] if str(error) else "")
        for inst in self.instruments:
            inst.after_pass_failed(name, graph, error)

    def final_fx(self, concrete: Any, gm: Any) -> None:
        name = getattr(getattr(concrete, "graph", None), "name", None) or getattr(concrete, "fx_graph_name", None)
        if self.current is None:
            return
        self.ledger.graph(self.current, self.ledger._graphs[self.current]["kind"], name=name)
        self.concrete_graphs.append((self.current, concrete))
        graph = read_fx(gm, self.current)
        self.ledger.add_stage(self.current, "fx-final", graph, text=fx_text(gm), fingerprint=fingerprint(graph))

    # -- GE ------------------------------------------------------------------------------------
    def ge_stage(self, file_name: str, ge: Any) -> None:
        if self.current is None:
            return
        graph = graph_from_ge_proto(getattr(ge, "_proto", ge))
        stage = GE_STAGE_NAMES.get(file_name, f"ge:{file_name}")
        self.ledger.add_stage(self.current, stage, graph, text=ge_text(graph))

    def after_ge_pass(self, name: str, ge: Any, seconds: float, changed: bool | None) -> None:
        if self.current is None:
            return
        graph = graph_from_ge_proto(getattr(ge, "_proto", ge))
        self.ledger.add_stage(self.current, f"ge:after:{name}", graph, text=ge_text(graph), changed=changed,
                              seconds=round(seconds, 6))

    def torchair_dump(self, path: Path, graph_name: str | None) -> None:
        name = path.name
        stage = "ge-optimized" if name.startswith("dynamo_optimized") else "ge-original"
        if path.suffix == ".py" and self._is_acl(graph_name):
            stage = "aclgraph-optimized" if name.startswith("dynamo_optimized") else "aclgraph-original"
        self.ledger.add_dump(path, graph=graph_name, type=path.suffix.lstrip("."), stage=stage,
                             written_by="torchair")

    def _is_acl(self, graph_name: str | None) -> bool:
        return any(type(c).__name__ == "AclConcreteGraph" for _, c in self.concrete_graphs)

    def finalize(self) -> None:
        """Collect TorchAir's generated aclgraph code (reduce-overhead) into ``torchair/``."""
        for gid, concrete in self.concrete_graphs:
            code = getattr(concrete, "fx_forward", None)
            if type(concrete).__name__ != "AclConcreteGraph" or not isinstance(code, str):
                continue
            name = getattr(concrete, "fx_graph_name", gid)
            path = self.ledger.root / "torchair" / f"output_code_{name}.py"
            path.write_text(code, encoding="utf-8")
            self.ledger.add_dump(path, graph=name, type="py", stage="generated-code", written_by="torchair")


def capturing_backend(backend: Any, session: CaptureSession) -> Any:
    """Wrap a TorchAir Dynamo backend so each Dynamo graph is captured before TorchAir sees it."""

    def backend_with_capture(gm: Any, example_inputs: Sequence[Any], **kwargs: Any) -> Any:
        session.dynamo_graph(gm, example_inputs)
        return backend(gm, example_inputs, **kwargs)

    return backend_with_capture
