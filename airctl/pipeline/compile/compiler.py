"""``airctl compile``: compile a model script through TorchAir with every stage captured.

>>> result = compile_model(CompileRequest(Target(Path("fixtures/models/seed.py"))))   # doctest: +SKIP
>>> result.ledger_dir, result.execution.matches_eager                         # doctest: +SKIP
(PosixPath('airctl-runs/20261122-101500-seed-3f2a'), True)

The compile is a body inside a :class:`~airctl.pipeline.run.lifecycle.Run`, which owns the ledger
from its creation to its end (signals, the user's code ending the process, the current-run
pointer); whatever fails, ``index.json`` ends with what was captured and the error (``status`` =
``failed``/``mismatch``/``interrupted``/``terminated``; :mod:`.failure` says what went wrong).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from airctl.backends import Backend, choose
from airctl.errors import AirctlError, ExecutionMismatch, ModelScriptError, find_in_chain
from airctl.execute.compare import DEFAULT_ATOL, Comparison, compare
from airctl.hooks.capture import observing
from airctl.instrument import StopAfterPass
from airctl.io.gc_pause import gc_paused
from airctl.ledger.writer import LedgerWriter
from airctl.modes import CAPTURES, Capture, DumpType, Mode
from airctl.pipeline.compile.capture import CaptureSession, capturing_backend
from airctl.pipeline.compile.failure import translate
from airctl.pipeline.compile.npugraph_ex import backend_for, build_npugraph_ex_config, compile_dynamic
from airctl.pipeline.compile.options import apply_options
from airctl.pipeline.compile.request import CompileRequest, CompileResult, Progress
from airctl.pipeline.compile.seed import seed_all
from airctl.pipeline.compile.torch_state import torch_state_kept
from airctl.pipeline.compile.torchair_warnings import kept_warnings  # TorchAir's warnings: into the ledger
from airctl.pipeline.compile.why_events import recording_why
from airctl.pipeline.incremental import Incremental
from airctl.pipeline.run.current import model_record
from airctl.pipeline.run.execution import RunExecution
from airctl.pipeline.run.finish import verify_instruments
from airctl.pipeline.run.lifecycle import Run
from airctl.pipeline.run.logs import capture_logs
from airctl.pipeline.run.model_script import LoadedModel, load_model_script, ran_from
from airctl.pipeline.run.rank import collectives_of, timeout_of
from airctl.pipeline.script.check import detached_clone
from airctl.torch_env import torchair_attr

DUMP_TYPES = tuple(t.value for t in DumpType)

__all__ = ["CompileRequest", "CompileResult", "build_config", "compile_model"]


def build_config(torchair: Any, req: CompileRequest, ledger: LedgerWriter, backend: Backend,
                 dump_types: Sequence[str], hooks: Any = None) -> Any:
    config = _base_config(torchair, req, ledger, backend, dump_types, hooks)
    if req.target.options:  # checked against the mode's own config (pipeline/compile/npugraph_ex.py)
        ledger.set(options=apply_options(config, req.target.options, req.target.mode))
    return config


def _base_config(torchair: Any, req: CompileRequest, ledger: LedgerWriter, backend: Backend,
                 dump_types: Sequence[str], hooks: Any = None) -> Any:
    target = req.target
    if target.mode.is_npugraph_ex:  # a package of its own, with its own config (pipeline/compile/npugraph_ex.py)
        return build_npugraph_ex_config(hooks.pre_pass if hooks is not None else req.pre_pass,
                                        hooks.post_pass if hooks is not None else req.post_pass, target.torchair_off)
    config = torchair.CompilerConfig()
    config.mode = req.target.mode.value
    if dump_types:
        config.debug.graph_dump.type = dump_types[0]
        config.debug.graph_dump.path = str(ledger.root / "torchair")
    pre = hooks.pre_pass if hooks is not None else req.pre_pass
    post = hooks.post_pass if hooks is not None else req.post_pass
    if pre is not None:
        config.post_grad_custom_pre_pass = pre
    if post is not None:
        config.post_grad_custom_post_pass = post
    if req.target.torchair_off:
        from airctl.hooks.pass_switch import configure

        configure(config, req.target.torchair_off)
    backend.configure(config, req.target.mode)
    return config


def compile_model(req: CompileRequest, progress: Progress | None = None) -> CompileResult:
    """Compile, run and check ``req.target.model_path`` into a new ledger (see the module)."""
    model = model_record(Path(req.target.model_path), req.target.entry)
    origin = {"passes_resolved": str(Path(req.target.passes_file).resolve()) if req.target.passes_file else None,
              "command_line": list(req.command_line) if req.command_line else None,
              "bisect": req.bisect, "seed": req.target.seed}
    origin = {k: v for k, v in origin.items() if v is not None}  # what made the run (passes apply/profile reuse it)
    rank = req.rank
    passes = str(req.target.passes_file) if req.target.passes_file is not None else None
    fields = dict(command=req.command, mode=req.target.mode, model=model, passes=passes, **origin,
                  **(rank.fields if rank is not None else {}))
    # no cyclic collection during the compile (airctl/io/gc_pause.py: "A compile"): its garbage waits for the end
    with Run.of(req.out_dir, Path(req.target.model_path).stem, rank.root if rank else None,
                what=f"the model script {req.target.model_path}", **fields) as run, torch_state_kept(), \
            gc_paused(hold=True):
        result = _Compile(req, run, model, progress).execute()
    from airctl.pipeline.compile.known_causes import explain_mismatch

    return explain_mismatch(req, result, progress, compile_model)


class _Compile:
    """One compile's state while its body runs (the ledger, the session, the result so far)."""

    def __init__(self, req: CompileRequest, run: Run, model: dict[str, Any], progress: Progress | None) -> None:
        self.req, self.run, self.ledger, self.model = req, run, run.ledger, model
        self.say = progress or (lambda _msg: None)
        self.session: CaptureSession | None = None
        self.backend: Backend | None = None
        self.execution: Comparison | None = None
        self.hooks = req.hooks
        self.runs = RunExecution(req.threads_per_stream, req.stream_timeout_s, collectives_of(req.rank),
                                 timeout_of(req.rank))
        self.kept: dict[str, Any] | None = None
        self.want_report = req.report and req.target.capture != Capture.MINIMAL
        self.draft: Any = None

    def result(self, error: AirctlError | None = None) -> CompileResult:
        return CompileResult(self.ledger.shown, self.ledger.run_index, self.backend, self.execution, error,
                             self.session, self.runs.race_rows(), self.hooks, self.kept)

    def execute(self) -> CompileResult:
        """The body, then the run's end: ok (``planned`` when it stopped after the passes), or the
        failure :mod:`.failure` makes of what was raised (``mismatch`` for wrong numbers)."""
        req, run = self.req, self.run
        try:
            self._body()
        except KeyboardInterrupt:
            raise  # the Run ends the ledger interrupted or terminated
        except StopAfterPass:
            pass
        except BaseException as exc:  # noqa: BLE001 - every failure must land in index.json
            if find_in_chain(exc, StopAfterPass) is not None:
                run.finish("planned", report=self.want_report)
                return self.result()
            error = translate(exc, self.session, self.ledger, Path(req.target.model_path), self.backend)
            run.fail(error, status="mismatch" if isinstance(error, ExecutionMismatch) else "failed",
                     report=self.want_report, draft=self.draft)
            return self.result(error)
        run.finish("planned" if req.stop_after_passes else None, report=self.want_report, draft=self.draft)
        return self.result()

    def _body(self) -> None:
        req, ledger, say = self.req, self.ledger, self.say
        dump_types = _check_request(req)
        if self.hooks is None and req.target.passes_file and req.pre_pass is None and req.post_pass is None:
            from airctl.pipeline.pass_hooks import build_hooks

            self.hooks = build_hooks(Path(req.target.passes_file))
        t0 = time.perf_counter()
        backend = self.backend = choose(req.target.backend)
        ledger.set(backend=backend.to_json())
        say(f"backend {backend.name}: {backend.reason}")
        capture = Capture(req.target.capture)
        log_level = logging.INFO if capture is Capture.MINIMAL else logging.DEBUG
        logs = capture_logs(ledger.root / "log.txt", log_level, keep_node_trace=capture is Capture.FULL)
        opened = backend.session(self.runs, req.target.model_path)  # TorchAir, importable inside
        with kept_warnings(ledger, req.target.verbose), opened as torchair, logs:
            ledger.set_timing("backend_seconds", time.perf_counter() - t0)
            t0 = time.perf_counter()
            say(f"loading {req.target.model_path}")
            seed_all(req.target.seed)  # the script's random weights and inputs
            loaded = load_model_script(req.target.model_path, req.target.entry)
            source = ran_from(loaded.module)  # the hash of what ran, should the file have changed since
            sha = hashlib.sha256(source).hexdigest() if source is not None else self.model.get("sha256")
            ledger.set(model={**self.model, "sha256": sha, "found_by": loaded.found_by})
            ledger.set_timing("load_seconds", time.perf_counter() - t0)
            if req.keep_dynamo_graphs:
                self.kept = _keep(loaded)
            t0 = time.perf_counter()
            inc = Incremental.start(req, backend.name, loaded, not (req.trace_inference and _is_inference(loaded)), say)

            instruments = list(req.instruments) + (verify_instruments(req.target.mode) if req.verify else [])
            final = () if req.target.dump_types else capture.final_dumps(req.target.mode)  # --dump-type: as asked
            session = self.session = self.run.session = CaptureSession(
                ledger, instruments, extra_dump_types=dump_types[1:], capture=capture, final_dump_types=final,
                torchair_off=req.target.torchair_off, keep_dynamo_graphs=req.keep_dynamo_graphs)
            if self.kept is not None:
                self.kept["dynamo"] = session.dynamo_graphs
            for bound in {id(h): h for h in (self.hooks, *_hooks_of(req.pre_pass, req.post_pass)) if h}.values():
                bound.runner = session.runner  # YAML passes run through the capture's one runner
            config = build_config(torchair, req, ledger, backend, dump_types, self.hooks)
            if req.stop_after_passes:
                _install_plan_stop(config)
            ledger.set_timing("prepare_seconds", time.perf_counter() - t0)
            with observing(session), recording_why(session):
                try:
                    self.execution = _run(loaded, torchair, config, session, req, self.runs, say, inc)
                    if session.waiting and self.want_report:  # the report's graphs now, beside the forked pbtxt
                        self.draft = _draft(ledger)
                finally:
                    session.finalize()
                    for note in backend.notes():
                        ledger.note(note)
                    if req.bisect is not None:
                        ledger.set(bisect={**req.bisect, "torchair_skipped": session.skipped})
        if not ledger.run_index.graphs:
            raise _nothing_compiled(loaded)
        execution = self.execution
        if execution is not None:
            ledger.set(execution={**execution.to_json(), "races": self.runs.race_rows()})
            if not execution.matches_eager:
                raise ExecutionMismatch(
                    "compiled outputs differ from eager PyTorch: " + "; ".join(execution.mismatches[:5]),
                    hint="a pass changed the results (TorchAir requires passes to keep them); "
                         "see `airctl diff` between the stages of this ledger")


def _run_eager(loaded: LoadedModel, session: CaptureSession) -> Any:
    """The model run as plain PyTorch on its own copy of the model and inputs: the reference."""
    import torch

    model = loaded.model
    t0 = time.perf_counter()  # its own copy of the model included
    eager_model = copy.deepcopy(model) if isinstance(model, torch.nn.Module) else model
    eager_loaded = LoadedModel(loaded.path, loaded.module, eager_model, detached_clone(loaded.inputs), loaded.step,
                               loaded.found_by)
    try:
        eager_out = eager_loaded.call(eager_model)
    except (Exception, SystemExit) as e:  # the user's model, run as plain PyTorch: not TorchAir's doing
        from airctl.pipeline.run.model_script import user_code_error

        raise user_code_error(e, loaded.path, "the model, run eagerly before any compile,") from e
    session.ledger.set_timing("eager_seconds", time.perf_counter() - t0)
    return eager_out


def _is_inference(loaded: LoadedModel) -> bool:
    """A model in eval mode whose script has no training step: what users compile for inference."""
    import torch

    return loaded.step is None and isinstance(loaded.model, torch.nn.Module) and not loaded.model.training


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
    return {"inputs": detached_clone(loaded.inputs), "state": {k: v.detach().clone() for k, v in state.items()},
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


def _check_request(req: CompileRequest) -> list[str]:
    """The GE dump types to write; raises for a bad mode, dump type or model path (before torch loads)."""
    target = req.target
    if not (target.atol >= 0 and target.atol != float("inf")):  # NaN fails both comparisons
        raise AirctlError(f"invalid --atol {target.atol!r}",
                          hint=f"a tolerance is a finite number >= 0, e.g. {DEFAULT_ATOL:g}")
    if not isinstance(target.mode, Mode):  # the Target keeps a value that is not one as given
        raise AirctlError(f"invalid mode {target.mode!r}", hint="choose one of: " + ", ".join(m.value for m in Mode))
    if target.capture not in CAPTURES:
        raise AirctlError(f"invalid --capture {str(target.capture)!r}", hint="choose one of: " + ", ".join(CAPTURES))
    mode = target.mode
    dump_types = list(target.dump_types or Capture(target.capture).dumps(mode))
    bad = [t for t in dump_types if t not in DUMP_TYPES]
    if bad or (target.dump_types is not None and not dump_types):
        raise AirctlError(f"invalid --dump-type {','.join(bad) or '(empty)'}",
                          hint="choose from: " + ", ".join(DUMP_TYPES))
    if not set(dump_types) <= set(mode.dumps):
        raise AirctlError(
            f"--dump-type {','.join(dump_types)} is not available in {mode}",
            hint="npugraph_ex has no graph dump option: the ledger keeps its generated code (docs/sim.md)"
            if mode.is_npugraph_ex else "TorchAir's aclgraph mode dumps only 'py' graphs (it raises "
            "NotImplementedError otherwise); use --dump-type py")
    from airctl.pipeline.run.model_script import check_script

    check_script(target.model_path)  # a FIFO, /dev/zero, a huge file: refused before anything reads it
    return dump_types


def _hooks_of(*fns: Any) -> list[Any]:
    """The PassHooks behind composed YAML hooks passed as raw callables (``pre_pass=hooks.pre_pass``)."""
    from airctl.pipeline.pass_hooks import ComposedPass

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
         runs: RunExecution, say: Progress, inc: Incremental) -> Comparison | None:
    import torch

    model = loaded.model
    eager_out: Any = None
    if req.reference:
        say("running eager PyTorch for reference")
        seed_all(req.target.seed)
        eager_out = inc.reference(lambda: _run_eager(loaded, session))  # or the kept run's (pipeline/incremental)
    torch._dynamo.reset()
    _forget_failed_conversion()
    t0 = time.perf_counter()
    say(f"compiling through TorchAir ({req.target.mode}) and running once")
    npu_backend = backend_for(torchair, config)  # TorchAir checks the config here, in either compile
    compiled = inc.compiled(loaded, config, session)
    if compiled is None:  # a full compile; an incremental one (pipeline/incremental) skips Dynamo and AOT
        compiled = torch.compile(model, backend=capturing_backend(npu_backend, session),
                                 dynamic=compile_dynamic(req.target.mode))
    inference = req.trace_inference and _is_inference(loaded)
    seed_all(req.target.seed)  # the compiled run draws what the eager one drew
    with torch.no_grad() if inference else contextlib.nullcontext():
        compiled_out = loaded.call(compiled)
    session.ledger.set_timing("compile_and_run_seconds", time.perf_counter() - t0)
    inc.after_run(session.ledger, compiled_out)
    if not req.reference:
        return None
    comparison = compare(eager_out, compiled_out, atol=req.target.atol, rtol=req.target.atol)
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
