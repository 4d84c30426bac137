"""``airctl compile``: compile a model script through TorchAir with every stage captured.

>>> result = compile_model(CompileRequest(Path("fixtures/models/seed.py")))   # doctest: +SKIP
>>> result.ledger_dir, result.execution.matches_eager                         # doctest: +SKIP
(PosixPath('airctl-runs/20261122-101500-seed-3f2a'), True)

The ledger is created first and updated as the run goes; whatever fails, ``index.json`` ends
with what was captured and the error (``status`` = ``failed``/``mismatch``/``interrupted``).
"""

from __future__ import annotations

import copy
import errno
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.backends import BackendChoice, choose
from airctl.errors import AirctlBug, AirctlError, CompileError, ExecutionMismatch, ModelScriptError
from airctl.execute.compare import DEFAULT_ATOL, Comparison, compare
from airctl.instrument import Instrument, StopAfterPass
from airctl.ledger.collectives import CollectiveLog
from airctl.ledger.index import RunIndex
from airctl.ledger.writer import LedgerWriter, cannot_write
from airctl.modes import CAPTURES, MAX_AUTOTUNE, MODES, Capture, DumpType, Mode
from airctl.pipeline.compile.capture import CaptureSession, capturing_backend
from airctl.pipeline.compile.npugraph_ex import apply_options, backend_for, build_npugraph_ex_config, compile_dynamic
from airctl.pipeline.run.current import model_record
from airctl.pipeline.run.execution import RunExecution
from airctl.pipeline.run.finish import close_run, verify_instruments
from airctl.pipeline.run.interrupts import Redelivery, redelivered
from airctl.pipeline.run.logs import capture_logs
from airctl.pipeline.run.model_script import LoadedModel, load_model_script
from airctl.sim.ascend_ir import find_declarations, missing_hint
from airctl.sim.capture import observing
from airctl.torch_env import torchair_attr

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
    command_line: Sequence[str] | None = None  # the airctl command that asked for this run (recorded)
    threads_per_stream: int | None = None  # multi-stream executor (sim): intra-op threads per stream
    stream_timeout_s: float = 60.0  # multi-stream executor (sim): longest wait before it stops the run
    torchair_off: Sequence[str] = ()  # TorchAir passes to switch off (airctl bisect; airctl.sim.pass_switch)
    bisect: dict[str, Any] | None = None  # airctl bisect: this step, for index.json `bisect`
    keep_dynamo_graphs: bool = False  # keep each Dynamo graph and its real example inputs (airctl repro)
    # a rank of a multi-rank run (pipeline/ranks/worker.py): see RunRequest
    ledger_root: Path | None = None
    ledger_fields: dict[str, Any] = field(default_factory=dict)
    collectives: CollectiveLog | None = None
    collective_timeout_s: float | None = None
    options: dict[str, str] = field(default_factory=dict)  # --option KEY=VALUE: the mode's config (npugraph_ex.py)


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
    # keep_dynamo_graphs (airctl repro): {"inputs", "state" (the model's state_dict), "dynamo": [(gm, inputs)]}
    kept: dict[str, Any] | None = field(default=None, repr=False)


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
    config = _base_config(torchair, req, ledger, backend, dump_types, hooks)
    if req.options:  # checked against the mode's own config (pipeline/compile/npugraph_ex.py)
        ledger.set(options=apply_options(config, req.options, req.mode))
    return config


def _base_config(torchair: Any, req: CompileRequest, ledger: LedgerWriter, backend: BackendChoice,
                 dump_types: Sequence[str], hooks: Any = None) -> Any:
    if req.mode == Mode.NPUGRAPH_EX:  # a package of its own, with its own config (pipeline/compile/npugraph_ex.py)
        return build_npugraph_ex_config(hooks.pre_pass if hooks is not None else req.pre_pass,
                                        hooks.post_pass if hooks is not None else req.post_pass, req.torchair_off)
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
    if req.torchair_off:
        from airctl.sim.pass_switch import configure

        configure(config, req.torchair_off)
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
    try:
        graph = ledger.stage_graph(stage)
    except (AirctlError, OSError):  # the snapshot is not to be had (a full disk): the error stands without a node
        return None, None
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
    text = text.split("Traceback (most recent call last):", 1)[0]  # TorchAir embeds one (pretty_error_msg)
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


def _disk_full(exc: BaseException) -> OSError | None:
    """An OSError for a full disk (or a file-size limit) anywhere in the chain: TorchAir re-raises OSErrors
    as new ones holding only text, so the original is found through ``__context__``."""
    seen: BaseException | None = exc
    for _ in range(64):
        if seen is None:
            return None
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            return seen
        seen = getattr(seen, "inner_exception", None) or seen.__cause__ or seen.__context__
    return None


def _root(exc: BaseException) -> BaseException:
    seen = exc
    for _ in range(32):
        nxt = getattr(seen, "inner_exception", None) or seen.__cause__
        if nxt is None:
            break
        seen = nxt
    return seen


AIRCTL_DIR = Path(__file__).resolve().parents[2]


def _blame_airctl(root: BaseException, message: str) -> AirctlError | None:
    """An exception raised inside airctl's own code (not TorchAir's, not the user's): a bug to report,
    or a documented sim limitation (messages starting with "sim:")."""
    import traceback

    frames = traceback.extract_tb(root.__traceback__)
    if not frames or AIRCTL_DIR not in Path(frames[-1].filename).resolve().parents:
        return None
    last = frames[-1]
    if str(root).startswith("sim:"):
        return CompileError(f"not simulated: {message}", hint="run this model on an NPU (--backend npu), or keep the "
                            "op out of the graph; docs/sim.md lists what sim does not simulate")
    where = f"{Path(last.filename).relative_to(AIRCTL_DIR.parent)}:{last.lineno}"
    return AirctlBug(f"airctl failed (a bug in airctl, at {where}): {message}",
                     hint="rerun with --traceback and report it with the ledger; the ledger keeps what was captured")


def _translate(exc: BaseException, session: CaptureSession | None, ledger: LedgerWriter,
               model_path: Path | None = None) -> AirctlError:
    inner = _in_chain(exc, AirctlError)  # a PassError from a YAML pass, say
    while inner is not None:
        # TorchAir's error wrapper (pretty_error_msg) raises a copy of the same type whose message has
        # its traceback appended: the original, with its file and line, is further down the chain
        original = _in_chain(inner.__cause__ or inner.__context__, type(inner))
        if original is None or not inner.message.startswith(str(original)):
            return inner
        inner = original
    message = _root_message(exc)
    root = _root(exc)
    full = _disk_full(exc)
    if full is not None:
        return cannot_write(ledger.root, full)  # a full disk, whoever was writing (TorchAir's dumps too)
    if model_path is not None and isinstance(root, (Exception, SystemExit)):
        from airctl.pipeline.run.model_script import user_frames

        frames = user_frames(root, Path(model_path))
        import traceback

        innermost = traceback.extract_tb(root.__traceback__)
        if frames and innermost and frames[-1] == innermost[-1]:  # raised by the user's own code, under compile
            from airctl.pipeline.run.model_script import user_code_error

            return user_code_error(root, Path(model_path), "the model, while TorchAir compiled or ran it,")
    bug = _blame_airctl(root, message)
    if bug is not None:
        return bug
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
    with redelivered() as interrupts:  # a Ctrl-C Python drops in a finalizer comes again
        return _compile_model(req, progress, interrupts)


def _compile_model(req: CompileRequest, progress: Progress | None, interrupts: Redelivery) -> CompileResult:
    say = progress or (lambda _msg: None)
    label = Path(req.model_path).stem
    model = model_record(Path(req.model_path), req.entry)
    origin: dict[str, Any] = {}  # what made the run (airctl passes apply/profile with no model reuse it)
    if req.passes_file:
        origin["passes_resolved"] = str(Path(req.passes_file).resolve())
    if req.command_line:
        origin["command_line"] = list(req.command_line)
    if req.bisect is not None:
        origin["bisect"] = req.bisect
    fields = dict(command=req.command, mode=req.mode, model=model, passes=req.passes_file, **origin,
                  **req.ledger_fields)
    ledger = (LedgerWriter.create_at(req.ledger_root, **fields) if req.ledger_root is not None
              else LedgerWriter.create(req.out_dir, label, **fields))
    session: CaptureSession | None = None
    backend: BackendChoice | None = None
    execution: Comparison | None = None
    hooks = req.hooks
    runs = RunExecution(req.threads_per_stream, req.stream_timeout_s, req.collectives, req.collective_timeout_s)
    kept: dict[str, Any] | None = None
    want_report = req.report and req.capture != Capture.MINIMAL
    draft: Any = None
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
            ledger.set(model={**model, "found_by": loaded.found_by})
            ledger.set_timing("load_seconds", time.perf_counter() - t0)
            if req.keep_dynamo_graphs:
                kept = _keep(loaded)

            instruments = list(req.instruments) + (verify_instruments(req.mode) if req.verify else [])
            final = () if req.dump_types else capture.final_dumps(Mode(req.mode))  # --dump-type: as asked
            session = CaptureSession(ledger, instruments, extra_dump_types=dump_types[1:], capture=capture,
                                     final_dump_types=final,
                                     torchair_off=req.torchair_off, keep_dynamo_graphs=req.keep_dynamo_graphs)
            if kept is not None:
                kept["dynamo"] = session.dynamo_graphs
            for bound in {id(h): h for h in (hooks, *_hooks_of(req.pre_pass, req.post_pass)) if h}.values():
                bound.runner = session.runner  # YAML passes run through the capture's one runner
            config = build_config(torchair, req, ledger, backend, dump_types, hooks)
            if req.stop_after_passes:
                _install_plan_stop(config)
            with observing(session):
                try:
                    execution = _run(loaded, torchair, config, session, req, runs, say)
                    if session.waiting and want_report:  # the report's graphs now, beside the forked pbtxt
                        draft = _draft(ledger)
                finally:
                    session.finalize()
                    _note_assumed_ir(ledger, ascend_ir, backend)
                    if req.bisect is not None:
                        ledger.set(bisect={**req.bisect, "torchair_skipped": session.skipped})
            if not ledger.run_index.graphs:
                raise _nothing_compiled(loaded)
            if execution is not None:
                ledger.set(execution={**execution.to_json(), "races": runs.race_rows()})
                if not execution.matches_eager:
                    raise ExecutionMismatch(
                        "compiled outputs differ from eager PyTorch: " + "; ".join(execution.mismatches[:5]),
                        hint="a pass changed the results (TorchAir requires passes to keep them); "
                             "see `airctl diff` between the stages of this ledger")
    except KeyboardInterrupt:
        interrupts.seen()
        ledger.fail("interrupted", {"type": "KeyboardInterrupt"})
        ledger.finish("interrupted")
        raise
    except StopAfterPass:
        pass
    except BaseException as exc:  # noqa: BLE001 - every failure must land in index.json
        if _in_chain(exc, StopAfterPass) is not None:
            close_run(ledger, session, "planned", write_report=want_report)
            return CompileResult(ledger.root, ledger.run_index, backend, execution, None, session, runs.race_rows(),
                                 hooks, kept)
        error = _translate(exc, session, ledger, Path(req.model_path))
        status = "mismatch" if isinstance(error, ExecutionMismatch) else "failed"
        ledger.fail(error.message, error.to_json())
        close_run(ledger, session, status, write_report=want_report, draft=draft)
        return CompileResult(ledger.root, ledger.run_index, backend, execution, error, session, runs.race_rows(), hooks,
                             kept)
    close_run(ledger, session, "planned" if req.stop_after_passes else None, write_report=want_report, draft=draft)
    return CompileResult(ledger.root, ledger.run_index, backend, execution, None, session, runs.race_rows(), hooks,
                         kept)


def _draft(ledger: LedgerWriter) -> Any:
    """The report's costly part, made while TorchAir's pbtxt is written by a forked child (the run's
    last graph is captured by then); None when it fails: the report is then made whole at the end,
    where a failure is recorded."""
    from airctl.report import draft_report

    try:
        return draft_report(ledger.root, ledger.run_index, ledger.graphs_written)
    except Exception:  # noqa: BLE001 - the report's own error is recorded when it is written
        return None


def _forget_failed_conversion() -> None:
    """Start TorchAir's GE-op nesting count from zero. TorchAir counts nested GE op calls in a
    thread-local and records an op's Python line (the ``py`` dump) only at depth 0; an op that
    raised (a converter that failed in an earlier compile of this process) never decrements it,
    and every later py dump in the process silently loses its GE ops. A fresh process starts at 0."""
    local = torchair_attr("ge._ge_graph", "local_variable")
    if local is not None and getattr(local, "auto_convert_nesting", 0):
        local.auto_convert_nesting = 0


def _keep(loaded: LoadedModel) -> dict[str, Any]:
    """The script's inputs and the model's weights as loaded, before anything ran (airctl repro)."""
    state = loaded.model.state_dict() if hasattr(loaded.model, "state_dict") else {}
    return {"inputs": _clone(loaded.inputs), "state": {k: v.detach().clone() for k, v in state.items()},
            "found_by": loaded.found_by, "dynamo": []}


def _nothing_compiled(loaded: LoadedModel) -> ModelScriptError:
    """The model ran, but Dynamo handed TorchAir no graph: there is nothing to inspect."""
    from airctl.pipeline.run.model_script import split_inputs

    args, kwargs = split_inputs(loaded.inputs)
    kinds = ", ".join(type(v).__name__ for v in [*args, *kwargs.values()]) or "nothing"
    return ModelScriptError(
        f"nothing was compiled: the model ran, but Dynamo captured no graph ({loaded.found_by} gave {kinds})",
        file=str(loaded.path),
        hint="the inputs must be tensors the model computes with (get_inputs() returns a tensor, a tuple of "
             "tensors or a dict); a model that does no tensor work has no graph to compile")


def _note_assumed_ir(ledger: LedgerWriter, ascend_ir: Any, backend: BackendChoice) -> None:
    """Say which custom ops' IR sim took from their converters' keyword calls (not declared)."""
    if backend.name != "sim" or not ascend_ir.assumed:
        return
    ledger.note("sim: the Ascend IR of " + ", ".join(ascend_ir.assumed) + " was taken from the converter's "
                "keyword call to torchair.ge.custom_op (no declaration); on an NPU, CANN must have the op installed")


def _check_request(req: CompileRequest) -> list[str]:
    """The GE dump types to write; raises for a bad mode, dump type or model path (before torch loads)."""
    if not (req.atol >= 0 and req.atol != float("inf")):  # NaN fails both comparisons
        raise AirctlError(f"invalid --atol {req.atol!r}", hint="a tolerance is a finite number >= 0, e.g. 1e-5")
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
            hint="npugraph_ex has no graph dump option: the ledger keeps its generated code (docs/sim.md)"
            if mode is Mode.NPUGRAPH_EX else "TorchAir's aclgraph mode dumps only 'py' graphs (it raises "
            "NotImplementedError otherwise); use --dump-type py")
    if not Path(req.model_path).is_file():
        from airctl.pipeline.run.model_script import import_script

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
    try:
        eager_out = eager_loaded.call(eager_model)
    except (Exception, SystemExit) as e:  # the user's model, run as plain PyTorch: not TorchAir's doing
        from airctl.pipeline.run.model_script import user_code_error

        raise user_code_error(e, loaded.path, "the model, run eagerly before any compile,") from e
    session.ledger.set_timing("eager_seconds", time.perf_counter() - t0)

    torch._dynamo.reset()
    _forget_failed_conversion()
    backend = capturing_backend(backend_for(torchair, config), session)
    compiled = torch.compile(model, backend=backend, dynamic=compile_dynamic(req.mode))
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
