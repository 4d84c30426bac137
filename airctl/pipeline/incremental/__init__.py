"""Incremental apply: a loop command starts from a kept pre-pass graph instead of tracing again.

A compile asked to be incremental (``CompileRequest.incremental``: ``passes apply``, ``compile``,
``profile``, each ``bisect`` step) computes its key (:mod:`.key`) once the model script is loaded,
and looks through ``--out`` for a run that kept the AOT graph under the same key (:mod:`.replay`).
Found: Dynamo and AOT are skipped, the run records ``incremental: {from, ...}``. Not found, or
anything of the kept graph that does not check out: the full compile, and ``-v`` says why; a full
compile then keeps its own graph for the next command (:mod:`.keep`). ``AIRCTL_INCREMENTAL=0`` or
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
        found, why = find(Path(req.out_dir), key)
        if found is not None:
            self.found = found
            self._tell(f"incremental: starting from {found.run.name}'s pre-pass graph (Dynamo and AOT skipped)")
        else:
            self.why_full = why
            self._tell(f"incremental: full compile: {why}")
        self.keeper = Keeper(key, loaded, compiler_module(req.target.mode))
        return self

    def compiled(self, loaded: Any, config: Any, session: Any) -> Any:
        """The replayed compile (see :mod:`.replay`), or None: compile in full — the kept graph is
        not there or did not check out (said with ``-v``), and the full compile keeps its own."""
        if self.found is None:
            session.keeper = self.keeper
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
            return None
        session.ledger.set(incremental={"from": self.found.run.name, "skipped": ["dynamo", "aot"]})
        return compiled

    def after_run(self, ledger: Any, compiled_out: Any) -> None:
        """A full compile's run is over: keep its graph (or say why not with ``-v``)."""
        if self.found is not None or self.keeper is None:
            return
        why = self.keeper.write(ledger.root, compiled_out, ledger.run_index.events)
        if why is not None and self.verbose:
            print(f"airctl: incremental: nothing kept for the next command: {why}", file=sys.stderr)


def _not_eligible(req: Any, loaded: Any) -> str | None:
    if req.target.mode not in MODES:
        return f"{req.target.mode} is compiled in full (incremental apply covers " + ", ".join(map(str, MODES)) + ")"
    if loaded.step is not None:
        return "the script's step() is traced by Dynamo each time"
    if req.rank is not None or req.keep_dynamo_graphs:
        return "a rank or repro compile"
    return None
