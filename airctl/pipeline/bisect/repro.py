"""``airctl repro RUN``: a folder that reproduces a failing run anywhere airctl is installed.

>>> result = repro(ReproRequest(Path("airctl-runs/20261123-142500-blocks-9391"), Path("repro")))  # doctest: +SKIP
>>> result.verdict.bad, result.form                                                               # doctest: +SKIP
(True, 'script')

From the run's ledger: the model script and how it was found, the mode, the pass file (for a
``airctl bisect`` step: only its passes, and the culprit's placements), and what failed
(``--bad``, else read from the run: a failed compile, wrong numbers, a race, an error finding).
The model is compiled once more to take the values of its inputs and weights (and its Dynamo
graph), the folder is written (:mod:`airctl.pipeline.bisect.repro_files`), then ``run.sh``'s command
is run on the folder, in this process, to check that it fails the same way.

The model travels as the user's script (wrapped to load the saved values) unless it imports
files beside it, ``--graph`` is given, or ``--minify``: then as the Dynamo graph written as a
script (:mod:`airctl.io.fx_script`). ``--minify`` shrinks that graph by delta debugging on its
nodes (:mod:`airctl.pipeline.bisect.minify`) while the failure stays.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.execute.compare import DEFAULT_ATOL
from airctl.ledger.reader import Ledger
from airctl.modes import Bad, Mode
from airctl.pipeline.bisect.conditions import Condition, Verdict
from airctl.pipeline.bisect.repro_files import ReproError
from airctl.pipeline.run.model_script import script_source
from airctl.pipeline.target import Target


@dataclass
class ReproRequest:
    run: Path
    out: Path | None = None  # default: repro-<run id> beside the run's folder
    bad: str | None = None  # a Bad value; default: what the run shows
    minify: bool = False
    graph: bool = False  # write the Dynamo graph even when the script could travel
    backend: str = "auto"


@dataclass
class ReproResult:
    folder: Path
    form: str  # script | graph
    condition: Condition
    command: str
    verdict: Verdict  # of the check run on the written folder
    files: list[str]
    minify: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "form": self.form, "bad": self.condition.kind,
                "command": self.command, "reproduces": self.verdict.bad, "why": self.verdict.why,
                "files": self.files, "minify": self.minify, "notes": self.notes}


EXIT_NOTES = {"numerics": "3 (compiled outputs differ from eager)", "compile": "3 (the compile fails)",
              "race": "1 (--fail-on race: the executor reports a stream race)",
              "check": "1 (--fail-on check: the verifier finds an error)"}


def infer_bad(index: Any) -> str:
    """What the run shows, in this order: wrong numbers, a failed compile, a race, an error finding."""
    if index.status == "mismatch" or any((s.entry.eager_check or {}).get("matches") is False for s in index.stages()):
        return Bad.NUMERICS.value
    if index.status == "failed":
        return Bad.COMPILE.value
    if (index.execution or {}).get("races"):
        return Bad.RACE.value
    if any(f.get("severity") == "error" for f in index.findings):
        return Bad.CHECK.value
    raise ReproError(f"the run {index.run_id} did not fail (status {index.status}, no race, no error finding)",
                     hint="give --bad numerics|race|check|compile to write a reproducer anyway")


def _pass_file(index: Any) -> Any:
    """The run's pass file, cut to a bisect step's passes and placements (None without one)."""
    if not index.passes:
        return None
    from airctl.passes import load

    spec = load(index.passes)
    step = index.bisect or {}
    names = step.get("yaml_passes")
    keep = step.get("placements") or {}
    passes = [dataclasses.replace(p, placements=keep.get(p.name, p.placements)) for p in spec.passes
              if names is None or p.name in names]
    return dataclasses.replace(spec, passes=passes)


def command_line(mode: Mode, condition: Condition, atol: float, has_passes: bool, backend: str) -> str:
    parts = ["compile", "model.py", "--mode", mode.value, "--out", "runs", "--atol", f"{atol:g}"]
    if has_passes:
        parts += ["--passes", "passes.yaml"]
    if backend != "auto":
        parts += ["--backend", backend]
    if condition.kind in (Bad.RACE, Bad.CHECK):
        parts += ["--fail-on", condition.kind]
    return " ".join(shlex.quote(p) for p in parts)


def check_folder(folder: Path, mode: Mode, condition: Condition, backend: str) -> Verdict:
    """Compile the reproducer's model.py with its passes.yaml, as run.sh does, and judge the run."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model
    from airctl.pipeline.pass_hooks import build_hooks

    passes = folder / "passes.yaml"
    hooks = build_hooks(passes) if passes.is_file() else None
    with tempfile.TemporaryDirectory(prefix="airctl-repro-check-") as tmp:
        target = Target(folder / "model.py", mode=mode, backend=backend, atol=condition.atol,
                        passes_file=passes if hooks else None)
        result = compile_model(CompileRequest(target, out_dir=Path(tmp), hooks=hooks, report=False))
        return condition.judge(result)


def repro(req: ReproRequest, progress: Any = None) -> ReproResult:
    say = progress or (lambda _m: None)
    ledger = Ledger.open(req.run)
    index = ledger.index
    model = index.model or {}
    if index.command not in ("compile", "bisect", "passes apply") or not model.get("path"):
        raise ReproError(f"{req.run} is a `{index.command}` run: airctl repro needs a run of airctl compile, "
                         "bisect or passes apply (a model script it can load again)")
    script = Path(model["path"])
    mode = index.run_mode or Mode.MAX_AUTOTUNE
    atol = float((index.execution or {}).get("atol") or DEFAULT_ATOL)
    condition = Condition.make(req.bad or infer_bad(index), atol=atol)
    spec = _pass_file(index)
    final = Path(req.out) if req.out else Path(req.run).resolve().parent / f"repro-{index.run_id}"
    if final.exists() and (not final.is_dir() or any(final.iterdir())):
        raise ReproError(f"{final} exists and is not empty", hint="give another -o DIR (or remove it)")
    with _bundle(final) as folder:
        result = _write(req, index, script, mode, atol, condition, spec, folder, say)
    return dataclasses.replace(result, folder=final)


@contextlib.contextmanager
def _bundle(final: Path) -> Iterator[Path]:
    """A temporary folder beside ``final``, renamed to it when the body succeeds and removed otherwise:
    a refused or failed reproducer leaves nothing behind. Its files get one mode (:func:`_one_mode`)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    work = final.parent / f".{final.name}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
    work.mkdir()
    try:
        yield work
        _one_mode(work)
        os.replace(work, final)  # an empty `final` is replaced too
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _one_mode(folder: Path) -> None:
    """Every file of the bundle readable by all (safetensors writes its files 0600), run.sh executable."""
    umask = _umask()
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        executable = path.is_dir() or path.name == "run.sh"
        path.chmod((0o777 if executable else 0o666) & ~umask)


def _umask() -> int:
    """The process's umask, read without changing it (Linux); 022 elsewhere."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _write(req: ReproRequest, index: Any, script: Path, mode: Mode, atol: float, condition: Condition, spec: Any,
           folder: Path, say: Any) -> ReproResult:
    model = index.model or {}
    notes = []
    if (index.bisect or {}).get("torchair_off"):
        notes.append("the run had TorchAir passes switched off (" + ", ".join(index.bisect["torchair_off"])
                     + "); the reproducer runs them all")

    from airctl.pipeline.bisect import repro_files as rf

    files = rf.write_passes(spec, folder) if spec is not None else []
    say(f"compiling {script} once more to keep its inputs and weights")
    kept = _capture(Target(script, mode=mode, backend=req.backend, entry=model.get("entry"), seed=index.seed), folder)
    source = script_source(script)  # one checked read: what the bundle copies and parses
    local = rf.local_imports(script, source)
    form = "graph" if (req.graph or req.minify or local) else "script"
    if local and not (req.graph or req.minify):
        notes.append("the script imports " + ", ".join(local) + " from its folder: the model is its Dynamo graph")
    minified = None
    if form == "script":
        files += rf.write_script_form(source, kept, model.get("entry"), folder)
    else:
        from airctl.pipeline.bisect.minify import write_graph_form

        minified = write_graph_form(kept, script, folder, minify=req.minify,
                                    still_bad=lambda: check_folder(folder, mode, condition, req.backend).bad, say=say)
        files += ["model.py", "inputs.safetensors"]
    from airctl.pipeline.bisect import repro_requirements as rq  # the model's modules beyond torch

    modules = rq.outside_modules(script, source, kept.get("dynamo"))
    files += rq.write_requirements(folder, modules)
    if form == "graph":
        rq.add_imports(folder / "model.py", modules)
    command = command_line(mode, condition, atol, spec is not None, req.backend)
    why_text = condition.describe()
    rf.write_run(command, why_text, EXIT_NOTES[condition.kind], folder, check=rq.CHECK_SH)
    rf.write_versions(folder, {**rf.versions(index.backend), "modules": modules})
    say(f"checking that `bash run.sh` fails: {command}")
    verdict = check_folder(folder, mode, condition, req.backend)
    from airctl.io.paths import shareable

    # the folder is a scratch one until it is moved into place: name its files by their own names
    verdict = dataclasses.replace(verdict, why=shareable(verdict.why, cwd=folder.resolve()))
    described = _describe_files(files, form)
    rf.write_readme(folder, {"what": why_text, "run": str(req.run), "mode": mode.value,
                             "backend": (index.backend or {}).get("name"), "command": command,
                             "exit_note": EXIT_NOTES[condition.kind], "why": verdict.why,
                             "files": described, "versions": {**rf.versions(index.backend), "modules": modules},
                             "notes": notes})
    result = ReproResult(folder, form, condition, f"airctl {command}", verdict,
                         [*files, "run.sh", "versions.json", "README.md"], minified, notes)
    if not verdict.bad:
        raise AirctlError(f"the reproducer does not fail here: {verdict.why} (no folder was kept)",
                          hint="the failure may depend on something the folder does not hold (another file the "
                               "script reads, the random state); try --graph")
    return result


def _capture(target: Target, folder: Path) -> dict[str, Any]:
    """The run's model compiled again as it ran (its seed too), keeping its inputs, weights and Dynamo graphs."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    passes = folder / "passes.yaml"
    with tempfile.TemporaryDirectory(prefix="airctl-repro-") as tmp:
        from airctl.pipeline.pass_hooks import build_hooks

        hooks = build_hooks(passes) if passes.is_file() else None
        result = compile_model(CompileRequest(target, out_dir=Path(tmp), hooks=hooks, report=False,
                                              keep_dynamo_graphs=True))
    if result.kept is None:
        raise result.error or ReproError(f"{target.model_path} could not be loaded again")
    return result.kept


def _describe_files(files: list[str], form: str) -> list[tuple[str, str]]:
    what = {"model.py": "the model (get_model/get_inputs)" if form == "script" else
            "the model's Dynamo graph, written as a script (one line per node)",
            "original_model.py": "the original model script, unchanged",
            "inputs.safetensors": "the inputs' values (safetensors)", "inputs.json": "how the inputs are passed",
            "weights.safetensors": "the model's weights (state_dict, safetensors)",
            "passes.yaml": "the YAML passes of the run (with `placements:` when a bisect cut them)",
            "requirements.txt": "what to install in a fresh environment (run.sh checks it first)"}
    out = [(f, what.get(f, "a python plugin the pass file names" if f.startswith("plugins/") else "")) for f in files]
    return out + [("run.sh", "the command"), ("versions.json", "the versions it was made with"),
                  ("README.md", "this file")]
