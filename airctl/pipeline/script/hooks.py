"""The hooks ``airctl run`` attaches to the TorchAir a user script uses.

The script keeps its own calls; airctl replaces, for the duration of the run, three public
names with wrappers that call the originals:

- ``torchair.get_npu_backend``: the backend TorchAir returns is wrapped so every Dynamo graph
  it receives is captured (:func:`~airctl.pipeline.compile.capture.capturing_backend`) and checked
  against eager (:mod:`~airctl.pipeline.script.check`). The ``"npu"`` and ``"npugraph_ex"``
  Dynamo backends resolve ``torchair.get_npu_backend`` when they run, so they capture too.
  Under sim, for the aclgraph modes (reduce-overhead, npugraph_ex), the user's config gets
  ``debug.run_eagerly = True``: NPU graph capture/replay is a device feature, so TorchAir's
  generated aclgraph code runs eagerly on the stand-in streams (logged, and listed in
  ``index.json`` under ``compilers``). npugraph_ex's own ``get_npu_backend``/``get_compiler`` (the
  wheel's package, which ``backend="npugraph_ex"`` uses) are wrapped the same way; its config has
  no ``run_eagerly``: sim runs its graphs keeping its capture bookkeeping instead.
- ``torchair.get_compiler``: the same config treatment; graphs the script compiles through
  the bare compiler have no Dynamo stage (airctl does not see them before AOT).
- ``torch_npu.profiler.tensorboard_trace_handler``: the ``*_ascend_pt`` folders each handler
  writes are listed in ``index.json`` under ``profiles``.

Under sim one more observer watches the stand-in streams (the stand-in device's observers,
:mod:`airctl.sim.registry`): native ``torch.npu.Stream``/``Event`` calls made *while Dynamo
traces* a function are plain Python on the stand-in, so Dynamo inlines them and they leave no
node in the graph (no graph break, no error; on an NPU torch_npu makes them graph nodes that
TorchAir turns into streams and events). Dynamo replays the observer's list append as a side
effect of the compiled code, so after the run airctl knows they were dropped and says so
(``index.json`` ``warnings``).

The stage capture itself comes from TorchAir's observer and concrete-graph patches
(:mod:`airctl.hooks.capture`), listening for the whole script with the :class:`RunSession`.
TorchAir writes its graph dumps where the script's config says; each dump is also copied into
the ledger's ``torchair/`` (the index entry keeps the original path in ``source``).
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from airctl.backends import Backend
from airctl.execute.compare import DEFAULT_ATOL
from airctl.hooks.patching import Patches
from airctl.instrument import Instrument
from airctl.ledger.writer import LedgerWriter
from airctl.modes import Mode
from airctl.pipeline.compile.capture import CaptureSession, capturing_backend
from airctl.pipeline.run.execution import RunExecution
from airctl.pipeline.script.check import GraphCheck, copy_graph_module

Note = Callable[[str], None]

DROPPED_STREAMS_WARNING = (
    "native torch.npu stream/event calls inside a compiled function ({calls}) were traced away by Dynamo "
    "under sim: they are not in the graph and every op of it ran on one stream. On an NPU, torch_npu makes "
    "them graph nodes that TorchAir turns into streams and events (aclgraph modes only). Use "
    "torchair.scope.npu_stream_switch and torchair.ops.record/wait to see multi-stream graphs under sim.")


class TracedStreamCalls:
    """Stream/event calls Dynamo traced (and therefore dropped) under sim. Dynamo replays the
    append as a side effect of the compiled code, so the list sees every traced call."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, kind: str, **_details: Any) -> None:
        import torch

        if torch.compiler.is_compiling():
            self.calls.append(kind)


class RunSession(CaptureSession):
    """A capture session that leaves TorchAir's dumps where the script asked and copies them."""

    def __init__(self, ledger: LedgerWriter, instruments: Sequence[Instrument] = ()) -> None:
        super().__init__(ledger, instruments, extra_dump_types=())
        self.compress_log = False  # log.txt is the script's own log, teed as it runs

    def aot_graph(self, gm: Any, phase: str) -> None:
        if phase != "backward" and self._pending_dynamo is None:
            # compiled without a Dynamo graph airctl saw (torchair.get_compiler in the script's
            # own AOT backend): a graph number of its own, so graphs do not merge
            self.dynamo_count += 1
        super().aot_graph(gm, phase)

    # With TORCH_COMPILE_DEBUG=1 (which a script may set) TorchAir also dumps the graph after
    # every pass it already reports through apply_gm_pass/apply_gegraph_pass; those dumps would
    # repeat the stage just captured.
    def dumped_fx_pass(self, name: str, gm: Any) -> None:
        if self.runner.is_running(name):  # inside apply_gm_pass: the runner captures this stage
            return
        super().dumped_fx_pass(name, gm)

    def ge_stage(self, file_name: str, ge: Any) -> None:
        if file_name.startswith("graph_after_"):
            return
        super().ge_stage(file_name, ge)

    def torchair_dump(self, path: Path, graph_name: str | None) -> Path | None:
        source = Path(path).absolute()
        target = source
        ledger_dumps = (self.ledger.root / "torchair").absolute()
        if source.parent != ledger_dumps and source.is_file():
            target = ledger_dumps / source.name
            shutil.copy2(source, target)
        listed = super().torchair_dump(target, graph_name)
        if listed is not None:
            self.ledger.update_dump(listed, source=str(source))
        return listed


def _value(option: Any) -> Any:
    return getattr(option, "value", option)


class RunHooks:
    """Wraps TorchAir's entry points for one run (``with hooks.installed(torchair):``) and collects what they saw."""

    def __init__(self, session: RunSession, backend: Backend, note: Note, runs: RunExecution, check: bool = True,
                 atol: float = DEFAULT_ATOL, make_instruments: Callable[[Mode], list[Any]] | None = None) -> None:
        self.session = session
        self.runs = runs
        self.ledger = session.ledger
        self.backend = backend
        self.note = note
        self.check = check
        self.atol = atol
        self.make_instruments = make_instruments
        self.checks: list[GraphCheck] = []
        self.compilers: list[dict[str, Any]] = []
        self.profiles: list[dict[str, Any]] = []
        self._configs: dict[int, dict[str, Any]] = {}
        self.traced = TracedStreamCalls()
        self._profile_roots: dict[Path, set[Path]] = {}
        self._debug_root = Path.cwd() / "torch_compile_debug"
        self._debug_before = set(self._debug_root.glob("run_*")) if self._debug_root.is_dir() else set()

    # -- install (restored when the block ends) ------------------------------------------------
    @contextlib.contextmanager
    def installed(self, torchair: Any) -> Iterator[None]:
        with Patches() as p, contextlib.ExitStack() as stack:
            p.setattr(torchair, "get_npu_backend", self._wrap_get_npu_backend(torchair.get_npu_backend))
            p.setattr(torchair, "get_compiler", self._wrap_get_compiler(torchair.get_compiler))
            npugraph_ex = sys.modules.get("npugraph_ex")  # its own backend and compiler (``backend="npugraph_ex"``)
            if npugraph_ex is not None and callable(getattr(npugraph_ex, "get_npu_backend", None)):
                p.setattr(npugraph_ex, "get_npu_backend", self._wrap_get_npu_backend(npugraph_ex.get_npu_backend))
                p.setattr(npugraph_ex, "get_compiler", self._wrap_get_compiler(npugraph_ex.get_compiler))
            profiler = sys.modules.get("torch_npu.profiler") or self.backend.profiler_module()
            if profiler is not None:
                p.setattr(profiler, "tensorboard_trace_handler",
                          self._wrap_trace_handler(profiler.tensorboard_trace_handler))
            stack.enter_context(self.backend.observing_streams(self.traced))
            yield

    def warnings(self) -> list[str]:
        if not self.traced.calls:
            return []
        calls = ", ".join(dict.fromkeys(self.traced.calls))
        return [DROPPED_STREAMS_WARNING.format(calls=calls)]

    # -- configs ------------------------------------------------------------------------------
    def _config_seen(self, config: Any, via: str) -> None:
        """Record the config (once) and, under sim, switch aclgraph modes to run_eagerly."""
        if config is None:
            return
        entry = self._configs.get(id(config))
        mode = Mode.parse(_value(config.mode))  # the script's config: TorchAir's or npugraph_ex's
        if entry is None:
            entry = {"via": via, "mode": mode.value}
            self._configs[id(config)] = entry
            self.compilers.append(entry)
            if self.ledger.run_index.mode is None:
                self.ledger.set(mode=mode)
                if self.make_instruments is not None:
                    self.session.add_instruments(self.make_instruments(mode))
        entry["mode"] = mode.value
        if getattr(config, "debug", None) is None:  # npugraph_ex's config: no dumps, no run_eagerly (sim keeps its
            self.ledger.set(compilers=self.compilers)  # capture bookkeeping: airctl.sim.patched_npugraph_ex_acl_graph)
            return
        dump = config.debug.graph_dump
        if getattr(dump, "enabled", False):
            entry["graph_dump"] = {"type": _value(dump.type), "path": _value(dump.path)}
        changed = self.backend.configure(config, mode)
        if changed is not None:
            entry["run_eagerly_set_by_airctl"] = True
            self.note(changed)
        self.ledger.set(compilers=self.compilers)

    # -- torchair.get_npu_backend ------------------------------------------------------------
    def _wrap_get_npu_backend(self, original: Callable[..., Any]) -> Callable[..., Any]:
        hooks = self

        def get_npu_backend(*args: Any, **kwargs: Any) -> Any:
            config = kwargs.get("compiler_config")
            hooks._config_seen(config, "get_npu_backend")
            backend = original(*args, **kwargs)
            if config is None:
                config = getattr(backend, "keywords", {}).get("compiler_config")
                hooks._config_seen(config, "get_npu_backend")
            return hooks.wrap_backend(backend, config)

        functools.update_wrapper(get_npu_backend, original)  # TorchAir's name, module, doc; __wrapped__
        return get_npu_backend

    def wrap_backend(self, backend: Any, config: Any) -> Callable[..., Any]:
        captured = capturing_backend(backend, self.session)

        def backend_with_airctl(gm: Any, example_inputs: Sequence[Any], **kwargs: Any) -> Any:
            self._config_seen(config, "get_npu_backend")  # the script may change the mode later
            reference = copy_graph_module(gm) if self.check else None
            compiled = captured(gm, example_inputs, **kwargs)
            if reference is None:
                return compiled
            check = GraphCheck(self.session.dynamo_count, reference, self._record_check, self.runs.recording,
                               atol=self.atol, collectives=self.runs.collectives)
            self.checks.append(check)
            return check.wrap(compiled)

        # Dynamo names the backend in its errors (BackendCompilerFailed: backend=...): keep TorchAir's
        backend_with_airctl.__name__ = getattr(backend, "__name__", None) or str(backend)
        if isinstance(backend, functools.partial):
            # TorchAir's backend is a functools.partial whose .keywords (compiler_config, ...) its own
            # code reads (inference.cache_compile): the wrapped backend is one too, with the same
            # arguments, which reach TorchAir's partial again when Dynamo calls it
            for attr in ("__module__", "__name__", "__qualname__"):  # the partial's repr reads TorchAir's
                value = getattr(backend.func, attr, None)
                if isinstance(value, str):
                    setattr(backend_with_airctl, attr, value)
            return functools.partial(backend_with_airctl, *backend.args, **backend.keywords)
        return backend_with_airctl

    def _record_check(self, number: int, summary: dict[str, Any]) -> None:
        for graph in self.ledger.run_index.graphs:
            if graph.dynamo_graph == number and graph.kind != "backward":
                self.ledger.update_graph(graph.id, execution=summary)

    # -- torchair.get_compiler ---------------------------------------------------------------
    def _wrap_get_compiler(self, original: Callable[..., Any]) -> Callable[..., Any]:
        hooks = self

        def get_compiler(*args: Any, **kwargs: Any) -> Any:
            compiler = original(*args, **kwargs)
            hooks._config_seen(getattr(compiler, "config", None), "get_compiler")
            return compiler

        functools.update_wrapper(get_compiler, original)
        return get_compiler

    # -- torch_npu.profiler.tensorboard_trace_handler ----------------------------------------
    def _wrap_trace_handler(self, original: Callable[..., Any]) -> Callable[..., Any]:
        hooks = self

        def tensorboard_trace_handler(dir_name: str | None = None, *args: Any, **kwargs: Any) -> Any:
            handler = original(dir_name, *args, **kwargs)
            root = Path(dir_name).absolute() if dir_name else Path.cwd()
            hooks._profile_roots.setdefault(root, set(root.glob("*_ascend_pt")) if root.is_dir() else set())

            def on_trace_ready(prof: Any) -> Any:
                result = handler(prof)
                hooks.collect_profiles()
                return result

            return on_trace_ready

        tensorboard_trace_handler.__doc__ = original.__doc__
        return tensorboard_trace_handler

    def collect_profiles(self) -> None:
        """List ``*_ascend_pt`` folders that appeared under the handlers' folders during the run."""
        known = {p["path"] for p in self.profiles}
        for root, before in self._profile_roots.items():
            if not root.is_dir():
                continue
            for folder in sorted(set(root.glob("*_ascend_pt")) - before):
                if str(folder) in known:
                    continue
                files = sorted(str(f.relative_to(folder)) for f in folder.rglob("*") if f.is_file())
                self.profiles.append({"path": str(folder), "files": files[:50], "file_count": len(files)})
        self.ledger.set(profiles=self.profiles)

    def collect_debug_dirs(self) -> None:
        """``TORCH_COMPILE_DEBUG=1`` trees TorchAir/torch wrote under ./torch_compile_debug during the run."""
        if self._debug_root.is_dir():
            new = sorted(set(self._debug_root.glob("run_*")) - self._debug_before)
            if new:
                self.ledger.set(torch_compile_debug=[str(p) for p in new])
