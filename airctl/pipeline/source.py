"""The one SOURCE resolver: what a command's SOURCE argument (or ``--run``) names, for every command.

Users loop over one folder of runs, so every command that works on something takes it the same
way, and :func:`resolve_source` decides what a SOURCE is before any verb runs:

============================  =====================================================================
SOURCE                        is
============================  =====================================================================
nothing                       the current run of ``--out`` (``AIRCTL_OUT``; ``./airctl-runs``)
``--run RUN``                 a run, in any of the forms below (never a file)
a run id, a unique part of    a run of ``--out`` (:func:`airctl.ledger.runs.resolve_run`);
one, ``latest``,              ``latest~N``: the N-th run before the current one
``latest~N``                  (``./latest``: a file of that name)
a ledger or rank folder       that run (``airctl-runs/<id>``, ``.../ranks/<rank>``)
a model script ``.py``        compiled first (:func:`compile_script`), into the command's ``--out``
                              (``dump``, whose ``--out`` is its output file: ``./airctl-runs``)
a graph file                  TorchAir ``.pbtxt``/``.txt``/``.py`` dump, airctl ``.json``, their
                              ``.gz``; for ``check`` also a DEBUG log or a ``graph():`` listing
a profiler folder             a torch_npu profiler output (``profile --times``)
============================  =====================================================================

Which forms a command takes is its ``accepts`` (:data:`RUNS`, :data:`GRAPHS`, ...): ``show``,
``why``, ``export``, ``repro``, ``passes fix`` take runs; ``dump``, ``diff``, ``check`` graphs (runs,
model scripts, graph files); ``profile``, ``bisect``, ``passes apply/explain/suggest`` a model or a
run (whose model, mode and pass file they reuse); ``profile --times`` also a profiler folder. A
form a command does not take, a SOURCE given with ``--run``, a name that is nothing: one error
each, worded the same for every command (exit 2).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from airctl.errors import AirctlError, GraphReadError, LedgerError, ModelScriptError
from airctl.graph.model import Graph
from airctl.io.read import read_graph
from airctl.io.source import is_model_script, is_profiler_folder
from airctl.ledger.defaults import Request, StageRequest
from airctl.ledger.reader import Ledger
from airctl.ledger.runs import LATEST, matching_runs, resolve_run, shown_folder
from airctl.ledger_files import INDEX, is_ledger
from airctl.modes import Mode
from airctl.pipeline.run.current import FIRST_ARGUMENT, RunOrigin, run_origin
from airctl.pipeline.target import EveryMode


class Form(StrEnum):
    """What a SOURCE is."""

    RUN = "run"
    MODEL = "model"
    GRAPH = "graph"
    PROFILE = "profile"


RUNS = frozenset({Form.RUN})
GRAPHS = frozenset({Form.RUN, Form.MODEL, Form.GRAPH})
MODELS = frozenset({Form.RUN, Form.MODEL})
PREDICTABLE = frozenset({Form.RUN, Form.MODEL, Form.PROFILE})
_SHORT = {Form.RUN: "run", Form.MODEL: "model script", Form.GRAPH: "graph file", Form.PROFILE: "profiler folder"}


@dataclass(frozen=True)
class Source:
    """A resolved SOURCE: its form, the path it names (a run: its ledger folder), and what was typed
    (None: nothing, the current run)."""

    form: Form
    path: Path
    given: str | None = None

    @property
    def named_run(self) -> bool:
        """A run named by id, ``latest`` or nothing, not by its folder: worth saying which run it was."""
        return self.form is Form.RUN and (self.given is None or not Path(self.given).is_dir())

    def describe(self) -> str:
        """``run <id>`` (``(the current run)`` when nothing was given), for a command's notes."""
        return f"run {self.path.name}" + ("" if self.given is not None else " (the current run)")


def forms_hint(accepts: Collection[Form], out_dir: Path | str) -> str:
    """What SOURCE may be, for a command taking ``accepts``."""
    words = {Form.RUN: f"a run of {shown_folder(out_dir)} (an id from `airctl runs` or a unique part of one, `latest`, "
                       "`latest~N`) or a run folder",
             Form.MODEL: "a model script (.py)", Form.GRAPH: "a graph file (a TorchAir dump, an airctl .json)",
             Form.PROFILE: "a torch_npu profiler folder"}
    return "give " + "; or ".join(words[f] for f in Form if f in accepts)


def resolve_source(given: str | Path | None, run: str | None = None, *, out_dir: Path | str,
                   accepts: Collection[Form] = RUNS, what: str = "a SOURCE", option: str = "--out") -> Source:
    """What ``given`` (a positional SOURCE) or ``run`` (``--run``) names; neither: the current run of
    ``out_dir`` (``option``: the command's option naming it, ``--runs`` where ``-o`` is its output).
    ``accepts``: the forms the command takes. Every error is a LedgerError, GraphReadError or
    ModelScriptError (exit 2) saying what SOURCE may be."""
    out_dir = Path(out_dir)
    if given is not None and run is not None and str(given) != str(run):
        raise not_both(what)
    if given is None:
        return Source(Form.RUN, resolve_run(out_dir, run, option), run)
    text = str(given)
    path = Path(text)
    if Form.RUN in accepts and _run_word(text):  # even beside a file named so (`./latest` names the file)
        return Source(Form.RUN, resolve_run(out_dir, text, option), text)
    if path.is_dir():
        return _folder(path, text, accepts, out_dir)
    if path.exists():
        return _file(path, text, accepts, out_dir)
    if Form.RUN in accepts and (accepts == RUNS or matching_runs(out_dir, text)):
        return Source(Form.RUN, resolve_run(out_dir, text, option), text)
    if text.endswith(".py") and Form.MODEL in accepts:
        raise ModelScriptError("model script not found", file=text, hint=forms_hint(accepts, out_dir))
    raise GraphReadError("no such file" + (", ledger folder or run" if Form.RUN in accepts else ""), file=text,
                         hint=forms_hint(accepts, out_dir))


def not_both(what: str = "a SOURCE") -> AirctlError:
    """The one error for a SOURCE given with ``--run``."""
    return AirctlError(f"give {what} or --run, not both", hint="--run picks a run when no SOURCE is given")


def _run_word(text: str) -> bool:
    """``latest`` or ``latest~N``: a run whatever the folder holds (an empty one says so)."""
    return text == LATEST or text.startswith(LATEST + "~")


def _folder(path: Path, text: str, accepts: Collection[Form], out_dir: Path) -> Source:
    if is_ledger(path) and Form.RUN in accepts:
        return Source(Form.RUN, path, text)
    if Form.PROFILE in accepts and is_profiler_folder(path):
        return Source(Form.PROFILE, path, text)
    raise LedgerError(f"not a ledger: no {INDEX}", file=text,
                      hint=forms_hint(accepts, out_dir) + " (`airctl import` makes a run of a folder TorchAir wrote)")


def _file(path: Path, text: str, accepts: Collection[Form], out_dir: Path) -> Source:
    model = is_model_script(path)
    if model and Form.MODEL in accepts:
        return Source(Form.MODEL, path, text)
    if not model and Form.GRAPH in accepts:
        return Source(Form.GRAPH, path, text)
    what = "a model script" if model else "a file"
    raise GraphReadError(f"{what}, not a " + " or ".join(_SHORT[f] for f in Form if f in accepts), file=text,
                         hint=forms_hint(accepts, out_dir) + ("; compile it first (`airctl compile`)" if model else ""))


@dataclass
class ModelChoice:
    """The model a command compiles: a model script SOURCE, or a run's (``origin``)."""

    model: Path
    entry: str | None
    mode: Mode
    passes: Path | None
    origin: RunOrigin | None = None


def choose_model(source: Source, *, entry: str | None, mode: Mode | None, passes: Path | None,
                 reuse_passes: bool = False, give: str = FIRST_ARGUMENT) -> ModelChoice:
    """A model script SOURCE as given; a run SOURCE: that run's model, entry and mode (``airctl
    passes apply``, ``profile``, ``bisect`` loop on the current run). What the command line gives
    wins over the run's; ``reuse_passes`` takes the run's pass file too; ``give``: how the command
    takes a model script (said when the run has none)."""
    if source.form is Form.MODEL:
        return ModelChoice(source.path, entry, mode or Mode.MAX_AUTOTUNE, passes)
    origin = run_origin(source.path.parent, source.path, give)
    chosen_passes = passes if passes is not None or not reuse_passes else origin.passes
    return ModelChoice(origin.model, entry if entry is not None else origin.entry, mode or origin.mode,
                       chosen_passes, origin)


def compile_script(path: Path, mode: Mode, *, command: str, passes: Path | str | None = None,
                   verify: bool = True, report: bool = True, out_dir: Path = Path("airctl-runs"),
                   every: EveryMode | None = None) -> Path:
    """Compile a model script into ``out_dir`` (the command's ``--out``, else ./airctl-runs) with the
    command's ``every`` (``--backend``, ``--seed``) and return its ledger folder (imports torch)."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    target = (every or EveryMode()).target(path, mode=mode, passes_file=Path(passes) if passes else None)
    result = compile_model(CompileRequest(target, out_dir=Path(out_dir), command=command, verify=verify,
                                          report=report))
    if not result.index.graphs:
        if result.error is not None:
            raise result.error
        raise ModelScriptError("the script compiled no graph", file=str(path))
    return result.ledger_dir


def load_source(source: Source | Path | str, stage: str | None = None,
                request: StageRequest | Request = Request.DUMP, mode: Mode = Mode.MAX_AUTOTUNE,
                runs_dir: Path = Path("airctl-runs"), every: EveryMode | None = None,
                keep_refs: bool = False) -> Graph:
    """The graph a SOURCE names; a model script is compiled first, into ``runs_dir`` (``airctl dump``/``diff``)."""
    path = source.path if isinstance(source, Source) else Path(source)
    if is_model_script(path):
        path = compile_script(path, mode, command="dump", out_dir=runs_dir, every=every)
    return read_source(path, stage, request, keep_refs)


def read_source(source: Path | str, stage: str | None = None,
                request: StageRequest | Request = Request.DUMP, keep_refs: bool = False) -> Graph:
    """The graph a graph file or ledger folder holds; ``request`` picks a ledger's stage when
    ``stage`` names none (docs/ledger.md, "Default stages"). ``keep_refs``: for a caller that uses the
    graph as read (:func:`airctl.io.read.read_graph`'s)."""
    path = Path(source)
    if is_model_script(path):
        raise GraphReadError("a model script is not a graph", file=str(path),
                             hint="compile it first (`airctl compile`), then pass the ledger folder")
    if path.is_dir():
        if not is_ledger(path):
            raise LedgerError(f"not a run folder: no {INDEX}", file=str(path),
                              hint="pass a graph file, or the run folder `airctl compile` printed")
        ledger = Ledger.open(path)
        return ledger.load(ledger.find_stage(stage, request=request), keep_refs)
    if stage is not None:
        raise GraphReadError("--stage/--from/--to need a ledger folder", file=str(path),
                             hint="a single graph file has no stages")
    if not path.exists():
        raise GraphReadError("no such file", file=str(path))
    return read_graph(path, keep_refs)


def check_targets(source: Source, *, stage: str | None = None, passes: Path | str | None = None,
                  mode: Mode | None = None, runs_dir: Path = Path("airctl-runs"),
                  every: EveryMode | None = None) -> list:
    """What ``airctl check SOURCE`` verifies; a model script is compiled (with ``passes``) first."""
    from airctl.verify.inputs import ledger_targets, load_targets

    if source.form is Form.MODEL:
        ledger = compile_script(source.path, mode or Mode.MAX_AUTOTUNE, command="check", passes=passes, verify=False,
                                report=False, out_dir=runs_dir, every=every)
        return ledger_targets(ledger, None)
    return load_targets(source.path, stage=stage)
