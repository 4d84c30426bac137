"""``airctl compile``: compile a model script through TorchAir with every stage captured.

>>> result = compile_model(CompileRequest(Path("fixtures/models/seed.py")))   # doctest: +SKIP
>>> result.ledger_dir, result.execution.matches_eager                         # doctest: +SKIP
(PosixPath('airctl-runs/20261122-101500-seed-3f2a'), True)

The ledger is created first and updated as the run goes; whatever fails, ``index.json`` ends
with what was captured and the error (``status`` = ``failed``/``mismatch``/``interrupted``).
"""

from __future__ import annotations

import copy
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.backends import BackendChoice, choose
from airctl.errors import AirctlError, CompileError, ExecutionMismatch
from airctl.execute.compare import DEFAULT_ATOL, Comparison, compare
from airctl.instrument import Instrument, StopAfterPass
from airctl.ledger.index import RunIndex
from airctl.ledger.writer import LedgerWriter
from airctl.modes import CAPTURES, MAX_AUTOTUNE, MODES, Capture, DumpType, Mode
from airctl.pipeline.capture import CaptureSession, capturing_backend
from airctl.pipeline.execution import RunExecution
from airctl.pipeline.finish import finish_ledger, verify_instruments
from airctl.pipeline.logs import capture_logs
from airctl.pipeline.model_script import LoadedModel, load_model_script
from airctl.sim.ascend_ir import find_declarations, missing_hint
from airctl.sim.capture import observing

DUMP_TYPES = tuple(t.value for t in DumpType)

PassFn = Callable[[Any, Any, Any], Any]
Progress = Callable[[str], None]


@dataclass
class CompileRequest:
    model_path: Path
    mode: str = MAX_AUTOTUNE
    out_dir: Path = Path("airctl-runs")
    backend: str = "auto"
    dump_types: Sequence[str] | None = None
    entry: str | None = None
    pre_pass: PassFn | None = None  # TorchAir's post_grad_custom_pre_pass (a raw callable)
    post_pass: PassFn | None = None  # TorchAir's post_grad_custom_post_pass (a raw callable)
    hooks: Any = None  # airctl.passes.PassHooks from a YAML file; built from passes_file when not given
    instruments: Sequence[Instrument] = ()
    atol: float = DEFAULT_ATOL
    command: str = "compile"
    passes_file: str | None = None
    stop_after_passes: bool = False  # --plan: stop before conversion and execution
    verify: bool = True  # verify-each: run the static verifier after every pass
    report: bool = True  # write report.html into the ledger (not with capture minimal)
    capture: str = Capture.DEFAULT.value  # how much of the compile the ledger keeps (modes.Capture)
    # after the checked run: called with a function that runs the compiled model once more, and the
    # run's RunExecution (``airctl profile`` runs its warmup and profiled steps here, recording them)
    after_run: Callable[[Callable[[], Any], RunExecution], None] | None = None
    threads_per_stream: int | None = None  # multi-stream executor (sim): intra-op threads per stream
    stream_timeout_s: float = 60.0  # multi-stream executor (sim): longest wait before it stops the run


@dataclass
class CompileResult:
    ledger_dir: Path
    index: RunIndex
    backend: BackendChoice | None
    execution: Comparison | None
    error: AirctlError | None = None
    session: CaptureSession | None = field(default=None, repr=False)
    races: list[dict[str, Any]] = field(default_factory=list)  # multi-stream executor (sim), execution.races
    hooks: Any = field(default=None, repr=False)  # the YAML passes' PassHooks (runs, warnings, errors)


def _clone(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        out = value.detach().clone()
        out.requires_grad_(value.requires_grad)
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def build_config(torchair: Any, req: CompileRequest, ledger: LedgerWriter, backend: BackendChoice,
                 dump_types: Sequence[str], hooks: Any = None) -> Any:
    config = torchair.CompilerConfig()
    config.mode = req.mode
    if dump_types:
        config.debug.graph_dump.type = dump_types[0]
        config.debug.graph_dump.path = str(ledger.root / "torchair")
    pre = hooks.pre_pass if hooks is not None else req.pre_pass
    post = hooks.post_pass if hooks is not None else req.post_pass
    if pre is not None:
        config.post_grad_custom_pre_pass = pre
    if post is not None:
        config.post_grad_custom_post_pass = post
    if backend.name == "sim" and req.mode == Mode.REDUCE_OVERHEAD:
        # NPU graph capture/replay is a device feature: under sim TorchAir's generated aclgraph
        # code (streams, events, closure events) runs eagerly — TorchAir's own run_eagerly path.
        config.debug.run_eagerly = True
    return config


_TARGET = re.compile(r"\b((?:torch\.ops\.)?(?:aten|prims|npu|air|_c10d_functional|npu_define)\.[A-Za-z0-9_]+"
                     r"(?:\.[A-Za-z0-9_]+)?)")


def _locate_node(session: CaptureSession | None, ledger: LedgerWriter, message: str) -> tuple[str | None, str | None]:
    """Find the FX node an error message talks about (converter errors name the target)."""
    if session is None or session.current is None:
        return None, None
    stage = ledger.last_stage(session.current, "fx")
    if stage is None:
        return None, None
    graph = ledger.stage_graph(stage)
    for m in _TARGET.finditer(message):
        target = m.group(1).removeprefix("torch.ops.")
        for node in graph.nodes:
            if node.op == target or node.op == target + ".default" or node.name == target:
                return node.name, node.source
    names = {n.name: n.source for n in graph.nodes}
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", message):
        if word in names and any(ch.isdigit() or ch == "_" for ch in word) and len(word) > 3:
            return word, names[word]
    return None, None


def _root_message(exc: BaseException) -> str:
    """The innermost meaningful message of a Dynamo-wrapped backend failure."""
    seen = exc
    while seen.__cause__ is not None or getattr(seen, "inner_exception", None) is not None:
        seen = getattr(seen, "inner_exception", None) or seen.__cause__
    text = f"{type(seen).__name__}: {seen}"
    text = re.sub(r"\n\s*\[ERROR\].*", "", text)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[:6])


def _in_chain(exc: BaseException, cls: type[BaseException]) -> Any:
    """The first ``cls`` in ``exc``'s chain (Dynamo wraps backend errors: ``inner_exception``, causes)."""
    seen: BaseException | None = exc
    for _ in range(32):
        if seen is None:
            return None
        if isinstance(seen, cls):
            return seen
        seen = getattr(seen, "inner_exception", None) or seen.__cause__ or seen.__context__
    return None


def _deadlock_error(session: CaptureSession | None, message: str) -> AirctlError | None:
    """A forward reference TorchAir (FX lint) refuses is, in a stream plan, a wait on a record that
    only comes later: when the verifier found a ``deadlock_cycle`` say that, not "used before defined"."""
    if session is None or "before it has been defined" not in message:
        return None
    rows = session.findings()
    cycle = next((r for r in rows if r.get("rule") == "deadlock_cycle"), None)
    if cycle is None:
        return None
    nodes = cycle.get("nodes") or []
    return CompileError(
        f"the stream plan deadlocks (verifier rule deadlock_cycle, first after stage {cycle.get('stage')} of graph "
        f"{cycle.get('graph')}): {cycle.get('message')}; TorchAir refused the graph before anything ran",
        node=nodes[0] if nodes else None,
        hint="a pass put a wait before the record it waits for: make every wait come after its records "
             "(`airctl check` on the ledger shows the cycle)")


def _translate(exc: BaseException, session: CaptureSession | None, ledger: LedgerWriter) -> AirctlError:
    inner = _in_chain(exc, AirctlError)  # a PassError from a YAML pass, say
    if inner is not None:
        return inner
    message = _root_message(exc)
    deadlock = _deadlock_error(session, message)
    if deadlock is not None:
        return deadlock
    node, source = _locate_node(session, ledger, message)
    file = line = None
    if source and ":" in source:
        file, _, ln = source.rpartition(":")
        line = int(ln) if ln.isdigit() else None
    model = ledger.run_index.model or {}
    hint = missing_hint(message, model.get("path"))  # a custom op's IR sim does not know: how to declare it
    if hint is None and ("ge_converter is not implemented" in message or "converter" in message.lower()):
        hint = ("TorchAir has no GE converter for this op: rewrite it with supported ops, register one with "
                "torchair.register_fx_node_ge_converter, or try --mode reduce-overhead")
    elif hint is None and ("scope_enter" in message or "scope_exit" in message):
        hint = "scope_enter/scope_exit must pair up in graph order (rule R1/R2); run `airctl check` on the ledger"
    where = f" at FX node {node}" if node else ""
    return CompileError(f"TorchAir failed to compile the model{where}: {message}", file=file, line=line, node=node,
                        hint=hint)


def compile_model(req: CompileRequest, progress: Progress | None = None) -> CompileResult:
    say = progress or (lambda _msg: None)
    label = Path(req.model_path).stem
    ledger = LedgerWriter.create(
        req.out_dir, label, command=req.command, mode=req.mode,
        model={"path": str(req.model_path), "entry": req.entry}, passes=req.passes_file,
    )
    session: CaptureSession | None = None
    backend: BackendChoice | None = None
    execution: Comparison | None = None
    hooks = req.hooks
    runs = RunExecution(req.threads_per_stream, req.stream_timeout_s)
    try:
        dump_types = _check_request(req)
        if hooks is None and req.passes_file and req.pre_pass is None and req.post_pass is None:
            from airctl.passes import build_hooks

            hooks = build_hooks(Path(req.passes_file))
        t0 = time.perf_counter()
        backend = choose(req.backend)
        ledger.set(backend=backend.to_json())
        # sim's stand-in for CANN's op registry: custom ops' IR declared beside the model (docs/sim.md)
        ascend_ir = find_declarations(req.model_path) if backend.name == "sim" else None
        say(f"backend {backend.name}: {backend.reason}")
        capture = Capture(req.capture)
        log_level = logging.INFO if capture is Capture.MINIMAL else logging.DEBUG
        logs = capture_logs(ledger.root / "log.txt", log_level, keep_node_trace=capture is Capture.FULL)
        with backend.session(runs.sim_context(ascend_ir)) as torchair, logs:
            ledger.set_timing("backend_seconds", time.perf_counter() - t0)
            t0 = time.perf_counter()
            say(f"loading {req.model_path}")
            loaded = load_model_script(req.model_path, req.entry)
            ledger.set(model={"path": str(req.model_path), "entry": req.entry, "found_by": loaded.found_by})
            ledger.set_timing("load_seconds", time.perf_counter() - t0)

            instruments = list(req.instruments) + (verify_instruments(req.mode) if req.verify else [])
            session = CaptureSession(ledger, instruments, extra_dump_types=dump_types[1:], capture=capture)
            for bound in {id(h): h for h in (hooks, *_hooks_of(req.pre_pass, req.post_pass)) if h}.values():
                bound.runner = session.runner  # YAML passes run through the capture's one runner
            config = build_config(torchair, req, ledger, backend, dump_types, hooks)
            if req.stop_after_passes:
                _install_plan_stop(config)
            with observing(session):
                try:
                    execution = _run(loaded, torchair, config, session, req, runs, say)
                finally:
                    session.finalize()
                    _note_assumed_ir(ledger, ascend_ir, backend)
            if execution is not None:
                ledger.set(execution={**execution.to_json(), "races": runs.race_rows()})
                if not execution.matches_eager:
                    raise ExecutionMismatch(
                        "compiled outputs differ from eager PyTorch: " + "; ".join(execution.mismatches[:5]),
                        hint="a pass changed the results (TorchAir requires passes to keep them); "
                             "see `airctl diff` between the stages of this ledger")
    except KeyboardInterrupt:
        ledger.fail("interrupted", {"type": "KeyboardInterrupt"})
        ledger.finish("interrupted")
        raise
    except StopAfterPass:
        pass
    except BaseException as exc:  # noqa: BLE001 - every failure must land in index.json
        if _in_chain(exc, StopAfterPass) is not None:
            ledger.finish("planned")
            finish_ledger(ledger, session, write_report=req.report and req.capture != Capture.MINIMAL)
            return CompileResult(ledger.root, ledger.run_index, backend, execution, None, session, runs.race_rows(),
                                 hooks)
        error = _translate(exc, session, ledger)
        status = "mismatch" if isinstance(error, ExecutionMismatch) else "failed"
        ledger.fail(error.message, error.to_json())
        ledger.finish(status)
        finish_ledger(ledger, session, write_report=req.report and req.capture != Capture.MINIMAL)
        return CompileResult(ledger.root, ledger.run_index, backend, execution, error, session, runs.race_rows(), hooks)
    ledger.finish("planned" if req.stop_after_passes else None)
    finish_ledger(ledger, session, write_report=req.report and req.capture != Capture.MINIMAL)
    return CompileResult(ledger.root, ledger.run_index, backend, execution, None, session, runs.race_rows(), hooks)


def _note_assumed_ir(ledger: LedgerWriter, ascend_ir: Any, backend: BackendChoice) -> None:
    """Say which custom ops' IR sim took from their converters' keyword calls (not declared)."""
    if backend.name != "sim" or not ascend_ir.assumed:
        return
    ledger.note("sim: the Ascend IR of " + ", ".join(ascend_ir.assumed) + " was taken from the converter's "
                "keyword call to torchair.ge.custom_op (no declaration); on an NPU, CANN must have the op installed")


def _check_request(req: CompileRequest) -> list[str]:
    """The GE dump types to write; raises for a bad mode, dump type or model path (before torch loads)."""
    if req.mode not in MODES:
        raise AirctlError(f"invalid mode {req.mode!r}", hint="choose one of: " + ", ".join(MODES))
    if req.capture not in CAPTURES:
        raise AirctlError(f"invalid --capture {req.capture!r}", hint="choose one of: " + ", ".join(CAPTURES))
    mode = Mode(req.mode)
    dump_types = list(req.dump_types or Capture(req.capture).dumps(mode))
    bad = [t for t in dump_types if t not in DUMP_TYPES]
    if bad or (req.dump_types is not None and not dump_types):
        raise AirctlError(f"invalid --dump-type {','.join(bad) or '(empty)'}",
                          hint="choose from: " + ", ".join(DUMP_TYPES))
    if not set(dump_types) <= set(mode.dumps):
        raise AirctlError(
            f"--dump-type {','.join(dump_types)} is not available in {mode}",
            hint="TorchAir's aclgraph mode dumps only 'py' graphs (it raises NotImplementedError otherwise); "
                 "use --dump-type py")
    if not Path(req.model_path).is_file():
        from airctl.pipeline.model_script import import_script

        import_script(Path(req.model_path))  # raises the precise ModelScriptError
    return dump_types


def _hooks_of(*fns: Any) -> list[Any]:
    """The PassHooks behind composed YAML hooks passed as raw callables (``pre_pass=hooks.pre_pass``)."""
    from airctl.passes.compose import ComposedPass

    return [fn.hooks for fn in fns if isinstance(fn, ComposedPass)]


def _install_plan_stop(config: Any) -> None:
    """--plan: the post pass hook stops the compile once it has run (TorchAir's passes all ran)."""
    post = config.post_grad_custom_post_pass.value

    def stop_after_post(gm: Any, example_inputs: Any, cfg: Any) -> None:
        if post is not None:
            post(gm, example_inputs, cfg)
        raise StopAfterPass()

    config.post_grad_custom_post_pass = stop_after_post


def _run(loaded: LoadedModel, torchair: Any, config: Any, session: CaptureSession, req: CompileRequest,
         runs: RunExecution, say: Progress) -> Comparison | None:
    import torch

    model = loaded.model
    eager_model = copy.deepcopy(model) if isinstance(model, torch.nn.Module) else model
    eager_inputs = _clone(loaded.inputs)

    t0 = time.perf_counter()
    say("running eager PyTorch for reference")
    eager_loaded = LoadedModel(loaded.path, loaded.module, eager_model, eager_inputs, loaded.step, loaded.found_by)
    eager_out = eager_loaded.call(eager_model)
    session.ledger.set_timing("eager_seconds", time.perf_counter() - t0)

    torch._dynamo.reset()
    backend = capturing_backend(torchair.get_npu_backend(compiler_config=config), session)
    compiled = torch.compile(model, backend=backend, dynamic=False)
    t0 = time.perf_counter()
    say(f"compiling through TorchAir ({req.mode}) and running once")
    compiled_out = loaded.call(compiled)
    session.ledger.set_timing("compile_and_run_seconds", time.perf_counter() - t0)
    comparison = compare(eager_out, compiled_out, atol=req.atol, rtol=req.atol)
    if req.after_run is not None:
        t0 = time.perf_counter()
        try:
            req.after_run(lambda: loaded.call(compiled), runs)
        finally:
            session.ledger.set(execution={**comparison.to_json(), "races": runs.race_rows()})
        session.ledger.set_timing("after_run_seconds", time.perf_counter() - t0)
    for row in runs.race_rows():
        say(f"stream race in {row['graph']}: {row['message']}")
    return comparison
