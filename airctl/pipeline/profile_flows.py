"""``airctl profile``'s five flows, and the one place that chooses among them.

What the command line names decides what ``profile`` does: ``--times`` predicts a plan on the NPU
(:class:`~airctl.pipeline.predict.PredictRequest`); ``analyze DIR`` reads a torch_npu profiler
folder (:class:`Analyze`); a run that is an import runs its GE graphs per stream (:class:`Imported`);
``--nproc N`` profiles a model's ranks (:class:`Ranks`); anything else profiles a model or the
current run's model (:class:`Model`, ``--compare``: with and without its passes). :func:`choose`
checks the combination (a usage error names the option that does not belong), resolves SOURCE
through :mod:`airctl.pipeline.source` and returns the flow's request; the CLI runs it and shows its
outcome. Nothing here runs a model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.modes import Mode
from airctl.pipeline.predict import PredictRequest
from airctl.pipeline.profile import ProfileRequest
from airctl.pipeline.target import EveryMode


@dataclass(frozen=True)
class ProfileArgs:
    """``airctl profile``'s command line, as typer parsed it."""

    source: str | None
    folder: Path | None
    run: str | None
    ledger: Path | None  # --ledger: the deprecated name of --run with `analyze`
    passes: Path | None
    mode: Mode | None
    entry: str | None
    every: EveryMode
    option: list[str] | None
    steps: int
    warmup: int
    compare: bool
    repeats: int
    nproc: int
    times: str | None
    device: str | None
    launch_us: float | None
    out: Path
    png: bool
    top: int
    command_line: list[str] | None


@dataclass(frozen=True)
class Analyze:
    folder: Path
    linked: Path | None  # the run whose graph nodes the tasks link to
    out: Path
    png: bool
    top: int


@dataclass(frozen=True)
class Imported:
    ledger: Path
    steps: int
    warmup: int
    png: bool
    top: int
    backend: str


@dataclass(frozen=True)
class Ranks:
    request: ProfileRequest
    nproc: int
    compare: bool


@dataclass(frozen=True)
class Model:
    request: ProfileRequest
    compare: bool
    png: bool
    top: int
    repeats: int


Flow = PredictRequest | Analyze | Imported | Ranks | Model


def choose(args: ProfileArgs, say: Callable[[str], None]) -> Flow:
    """The flow ``args`` name, checked and with SOURCE resolved; ``say`` gets what the user should read
    before it runs, as plain text (which run's model is profiled; ``warning: ...``: a deprecation, that
    run's warnings)."""
    from airctl.pipeline.source import MODELS, resolve_source

    if args.times is not None:
        return _predict(args)
    if args.source == "analyze":
        return _analyze(args, say)
    _check_model_args(args.folder, args.ledger)  # usage first: then what SOURCE names
    resolved = resolve_source(args.source, args.run, out_dir=args.out, accepts=MODELS)
    imported = _imported(resolved, args.passes, args.compare, args.nproc)
    if imported is not None:
        return Imported(imported, args.steps, args.warmup, args.png, args.top, str(args.every.backend))
    request, world = _model_request(args, resolved, say)
    if args.compare and request.target.passes_file is None:
        raise AirctlError("--compare needs --passes FILE.yaml (it runs the model without and with it)")
    nproc = args.nproc if args.nproc > 1 else world
    if nproc > 1:
        if args.nproc <= 1:
            say(f"the run ran on {world} ranks: profiling {world} (--nproc)")
        return Ranks(request, nproc, args.compare)
    return Model(request, args.compare, args.png, args.top, args.repeats)


def _predict(args: ProfileArgs) -> PredictRequest:
    """``--times``: one SOURCE (the current run, a run, a model script compiled first, a profiler folder)."""
    from airctl.pipeline.compile.options import parse_options
    from airctl.pipeline.source import PREDICTABLE, Form, resolve_source

    if args.source == "analyze" or args.folder is not None or args.nproc > 1:
        raise AirctlError("--times predicts one run's plan: it takes one SOURCE and no --nproc",
                          hint="airctl profile [RUN|MODEL.py|PROFILER-DIR] --times T.csv")
    options = parse_options(args.option)  # a bad --option is refused whatever SOURCE is
    resolved = resolve_source(args.source, args.run, out_dir=args.out, accepts=PREDICTABLE)
    model = None
    if resolved.form is Form.MODEL:  # compiled first
        model = args.every.target(resolved.path, mode=args.mode or Mode.MAX_AUTOTUNE, entry=args.entry,
                                  passes_file=args.passes, options=options)
    elif args.passes is not None:
        raise AirctlError("--passes with --times needs a model script", hint="airctl profile MODEL.py --passes "
                          "FILE.yaml --times T.csv (a run is predicted with the passes it ran with)")
    return PredictRequest(times=args.times, source=resolved.path, out_dir=args.out, device=args.device,
                          launch_us=args.launch_us, compare=args.compare, top=args.top, png=args.png, model=model,
                          command_line=args.command_line)


def _analyze(args: ProfileArgs, say: Callable[[str], None]) -> Analyze:
    """``analyze DIR``: what torch_npu's profiler wrote; ``--run`` (or ``--ledger``, its old name) links it
    to a run of the same model (any form: ``--run latest``)."""
    from airctl.pipeline.source import resolve_source

    run = args.run
    if args.ledger is not None:
        if run is not None:
            raise AirctlError("--ledger is the old name of --run: give one of them",
                              hint="airctl profile analyze DIR --run RUN")
        say("warning: --ledger is deprecated: `--run RUN` names the run, as in every command")
        run = str(args.ledger)
    if args.folder is None:
        raise AirctlError("`airctl profile analyze` needs a profiler folder",
                          hint="airctl profile analyze ./prof   (the dir given to tensorboard_trace_handler)")
    linked = resolve_source(run, out_dir=args.out).path if run is not None else None
    return Analyze(args.folder, linked, args.out, args.png, args.top)


def _model_request(args: ProfileArgs, source: Any, say: Callable[[str], None]) -> tuple[ProfileRequest, int]:
    """The ProfileRequest of MODEL.py, or of the current (``--run``) run's model, pass file and mode; and
    how many ranks that run ran on (1 for MODEL.py)."""
    from airctl.pipeline.compile.options import parse_options
    from airctl.pipeline.source import choose_model

    chosen = choose_model(source, entry=args.entry, mode=args.mode, passes=args.passes, reuse_passes=True)
    if chosen.origin is not None:
        with_passes = f" with {chosen.passes.name}" if chosen.passes else ""
        say(f"profiling {chosen.model.name}{with_passes} ({chosen.mode}, from run {chosen.origin.run.name})")
        for warning in chosen.origin.warnings:
            say(f"warning: {warning}")
    target = args.every.target(chosen.model, mode=chosen.mode, entry=chosen.entry, passes_file=chosen.passes,
                               options=parse_options(args.option))  # a bad --option: refused here
    return ProfileRequest(target, steps=args.steps, warmup=args.warmup, out_dir=args.out,
                          command_line=args.command_line), chosen.origin.world_size if chosen.origin else 1


def _imported(source: Any, passes: Path | None, compare: bool, nproc: int) -> Path | None:
    """The imported ledger to profile (SOURCE a run that is an import), else None."""
    from airctl.pipeline.profile_imported import imported_ledger
    from airctl.pipeline.source import Form

    if source.form is not Form.RUN:
        return None
    found = imported_ledger(source.path)
    if found is not None and (passes is not None or compare or nproc > 1):
        raise AirctlError("--passes, --compare and --nproc need a model script; an imported ledger has GE graphs only",
                          hint="profile the imported ledger as it is, or the model script with airctl profile MODEL.py")
    return found


def _check_model_args(folder: Path | None, ledger: Path | None) -> None:
    """Arguments that belong to `analyze`, given with a model script or a run."""
    if folder is not None:
        raise AirctlError(f"unexpected argument {str(folder)!r} after the model script or run",
                          hint="to read a profiler folder: airctl profile analyze DIR")
    if ledger is not None:
        raise AirctlError("--ledger goes with `airctl profile analyze DIR` (and is --run there now)",
                          hint="a model run writes its own ledger under --out; --run RUN profiles that run's model")
