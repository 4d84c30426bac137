"""Incremental apply: a loop command starts from a kept pre-pass graph instead of tracing again.

A compile asked to be incremental (``CompileRequest.incremental``: ``passes apply``, ``compile``,
``profile``, each ``bisect`` step) computes its key (:mod:`.key`) once the model script is loaded,
and looks through ``--out`` for a run that kept the AOT graph under the same key (:mod:`.replay`).
Found: Dynamo and AOT are skipped, the run records ``incremental: {from, ...}``. Not found, or
anything of the kept graph that does not check out: the full compile, and ``-v`` says why; a full
compile then keeps its own graph for the next command (:mod:`.keep`), with the results of its two
eager runs that the pass file does not change, which a compile from its graph reuses under their own
key (:mod:`.reuse`). ``AIRCTL_INCREMENTAL=0`` or
``--full``: always full, nothing kept. docs/incremental.md has the key, what is checked and what
is not reused.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airctl.modes import Mode

ENV = "AIRCTL_INCREMENTAL"
MODES = (Mode.MAX_AUTOTUNE, Mode.REDUCE_OVERHEAD, Mode.NPUGRAPH_EX)  # replays shown equal to full compiles


def compiler_module(mode: Mode) -> str:
    """The FX compiler module of the mode's package: npugraph_ex has its own."""
    return "npugraph_ex.npu_fx_compiler" if mode == Mode.NPUGRAPH_EX else "torchair.npu_fx_compiler"


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


class Incremental:
    """One compile's incremental state: the run it starts from (``found``), or what it keeps."""

    def __init__(self, say: Callable[[str], None], verbose: bool) -> None:
        self.say, self.verbose = say, verbose
        self.found: Any = None
        self.keeper: Any = None
        self.why_full: str | None = None
        self.reused: list[str] = []  # what was taken from the kept run besides the graph (.reuse)
        self._tensors: dict[str, Any] | None = None
        self._ledger: Any = None
        self.held: Any = None
        self._check: Any = None  # the eager check given the kept run's (until it takes it)

    def _tell(self, message: str) -> None:
        self.say(message)
        if self.verbose:
            print(f"airctl: {message}", file=sys.stderr)

    @classmethod
    def start(cls, req: Any, backend: str, loaded: Any, grad: bool, say: Callable[[str], None]) -> Incremental:
        """The run found, or why the compile is full; one that does nothing where the request is not
        incremental (or ``AIRCTL_INCREMENTAL=0``)."""
        self = cls(say, req.target.verbose)
        if not getattr(req, "incremental", False) or not enabled():
            return self
        why = _not_eligible(req, loaded)
        if why is not None:
            self.why_full = why
            self._tell(f"incremental apply off: {why}; compiling in full")
            return self
        from airctl.pipeline.incremental import key as keys
        from airctl.pipeline.incremental.keep import Keeper
        from airctl.pipeline.incremental.replay import find

        try:
            key = keys.compute(req.target, backend, loaded, grad)
        except Exception as e:  # noqa: BLE001 - the model may have moved what the key reads (chdir, deleted files)
            self.why_full = f"its key could not be computed ({type(e).__name__}: {e})"
            self._tell(f"incremental apply off: {self.why_full}; compiling in full")
            return self
        found, why = find(Path(req.kept_in or req.out_dir), key)
        if found is not None:
            self.found = found
            self._tell(f"incremental: starting from {found.run.name}'s pre-pass graph (Dynamo and AOT skipped)")
        else:
            self.why_full = why
            self._tell(f"incremental: full compile: {why}")
        self.keeper = Keeper(key, loaded, compiler_module(req.target.mode))
        return self

    def reference(self, run_eager: Callable[[], Any]) -> Any:
        """The eager reference: the kept run's outputs where its key and torch's threads are this
        compile's (:mod:`.reuse`), else ``run_eager()`` (kept by a full compile for the next one)."""
        reused = self._reused("eager", "the eager reference", self._eager)
        out = reused[0] if reused is not None else run_eager()
        if self.keeper is not None:  # (a reused one too: a full compile after a kept graph that did not check out)
            self.keeper.eager = out
        return out

    def _eager(self, described: dict[str, Any], tensors: dict[str, Any]) -> tuple[Any]:
        from airctl.pipeline.incremental.reuse import threads, unpack_eager

        if described.get("threads") != threads():
            raise ValueError(f"torch's threads changed ({described.get('threads')} -> {threads()})")
        return (unpack_eager(described, tensors),)

    def _reused(self, part: str, words: str, read: Callable[[dict[str, Any], dict[str, Any]], Any]) -> Any:
        """:meth:`_read`, said as reused (``part`` listed in the ledger's ``incremental.reused``)."""
        value = self._read(part, words, read)
        if value is not None:
            self._used(part, words)
        return value

    def _read(self, part: str, words: str, read: Callable[[dict[str, Any], dict[str, Any]], Any]) -> Any:
        """``read(description, tensors)`` of the kept run's ``part``; None (and why, with ``-v``) if not there."""
        if self.found is None:
            return None
        from airctl.pipeline.incremental.replay import MAX_KEPT_BYTES
        from airctl.pipeline.incremental.reuse import read_tensors

        described = (self.found.data.get("reuse") or {}).get(part)
        try:
            if not isinstance(described, dict) or "why_not" in described:
                why = described.get("why_not") if isinstance(described, dict) else "the kept run has none"
                raise ValueError(f"not kept ({why})")
            if self._tensors is None:
                self._tensors = read_tensors(self.found.run, MAX_KEPT_BYTES) if _has_tensors(described) else {}
            return read(described, self._tensors)
        except Exception as e:  # noqa: BLE001 - anything kept that does not read back: run it again
            self._tell(f"incremental: {words} runs again: {e}")
            return None

    def _used(self, part: str, words: str) -> None:
        self.reused.append(part)
        self._tell(f"incremental: {words} reused from {self.found.run.name if self.found else '?'}")

    def _give_check(self, session: Any) -> None:
        """Hand the kept eager check's first run to this compile's eager check (used if its key matches)."""
        from airctl.pipeline.incremental.reuse import eager_check_of, unpack_check

        check = eager_check_of(session)
        words = "the eager check's run of the first YAML pass's graph"
        given = self._read("eager_check", words, unpack_check) if check is not None else None
        if given is None:
            return
        key, outcome = given
        check.given = {key: outcome}
        self._check = check

        def used(_key: str) -> None:
            self._used("eager_check", words)
            self._record()

        check.on_given = used

    def _record(self) -> None:
        if self._ledger is not None and self.found is not None:
            self._ledger.set(incremental={"from": self.found.run.name, "skipped": ["dynamo", "aot"],
                                          **({"reused": list(self.reused)} if self.reused else {})})

    def compiled(self, loaded: Any, config: Any, session: Any) -> Any:
        """The replayed compile (see :mod:`.replay`), or None: compile in full — the kept graph is
        not there or did not check out (said with ``-v``), and the full compile keeps its own."""
        if self.found is None:
            session.keeper = self.keeper
            self._keep_check(session)
            return None
        from airctl.pipeline.incremental.graph_codec import Unsupported
        from airctl.pipeline.incremental.replay import compiled_model

        try:  # nothing is in the ledger yet: any failure here is a full compile
            compiled = compiled_model(self.found, loaded, config, session)
        except Exception as e:  # noqa: BLE001 - Unsupported, or the kept run's folder changed under us
            why = str(e) if isinstance(e, Unsupported) else f"{type(e).__name__}: {e}"
            self.why_full = f"{self.found.run.name}'s kept graph does not check out: {why}"
            self._tell(f"incremental: full compile: {self.why_full}")
            self.found = None
            session.keeper = self.keeper
            self._keep_check(session)
            return None
        self.held = compiled  # alive while the compile's end reads it, as Dynamo's cache holds a full compile's
        self._ledger = session.ledger
        self._record()
        self._give_check(session)
        return compiled

    def _keep_check(self, session: Any) -> None:
        if self.keeper is not None:
            from airctl.pipeline.incremental.reuse import eager_check_of

            check = self.keeper.eager_check = eager_check_of(session)
            if check is not None:
                check.keep_first = True

    def after_run(self, ledger: Any, compiled_out: Any) -> None:
        """A full compile's run is over: keep its graph (or say why not with ``-v``)."""
        if self._check is not None and self._check.given:
            self._tell("incremental: the eager check's kept run was not used: no checked YAML pass received "
                       "a graph with its key (the graph, its inputs' layouts, its constants, torch's threads)")
        if self.found is not None or self.keeper is None:
            return
        why = self.keeper.write(ledger.root, compiled_out, ledger.run_index.events)
        if why is not None and self.verbose:
            print(f"airctl: incremental: nothing kept for the next command: {why}", file=sys.stderr)


def _has_tensors(described: dict[str, Any]) -> bool:
    return any("tensor" in leaf for leaf in described.get("leaves") or described.get("outputs") or [])


def _not_eligible(req: Any, loaded: Any) -> str | None:
    if req.target.mode not in MODES:
        return f"{req.target.mode} is compiled in full (incremental apply covers " + ", ".join(map(str, MODES)) + ")"
    if loaded.step is not None:
        return "the script's step() is traced by Dynamo each time"
    if req.rank is not None or req.keep_dynamo_graphs:
        return "a rank or repro compile"
    return None
