"""``airctl import DIR|FILE...``: what a user copied off an NPU machine becomes a ledger.

>>> result = import_artifacts(ImportRequest([Path("from-npu/")]))        # doctest: +SKIP
>>> result.ledger_dir, [g.id for g in result.index.graphs]               # doctest: +SKIP
(PosixPath('airctl-runs/20261123-140000-import-from-npu-1a2b'), ['1-inference'])

:func:`airctl.io.artifacts.discover` finds TorchAir's files, :func:`airctl.importer.plan.plan_import`
links them into one plan per compiled graph with its stages in TorchAir's order, and this module
writes the ledger with the one writer, as ``airctl compile`` would have: stage snapshots (an
unchanged pass shares its predecessor's file), TorchAir's dumps copied into ``torchair/``, the
first log as ``log.txt`` (all logs under ``logs/``), profiler folders listed under ``profiles``.
Then the verifier runs after every pass stage, as verify-each does during a compile, and
``report.html`` is written. The index says where everything came from: ``command: "import"``,
``imported`` (sources, logs, traces, notes, problems), each stage's ``imported_from``; there is
no model script and no execution.

A file that cannot be read is a *problem*, not a failure: the ledger keeps everything else and
lists it (``imported.problems``, ``file:line: message``). Nothing importable at all is an error,
and so is a graph none of whose stages could be read: a ledger saying ``ok`` over a graph with
zero stages sent users looking in the wrong place, so the import fails (exit 2) naming
the first unreadable file, and the ledger keeps what was read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import GraphReadError
from airctl.graph.model import Graph
from airctl.importer.plan import GraphPlan, ImportPlan, plan_import
from airctl.instrument import fingerprint
from airctl.io.artifacts import ArtifactSet, discover
from airctl.io.listing import ge_ops_text
from airctl.ledger.files import copy_compressed
from airctl.ledger.index import RunIndex
from airctl.ledger.run_folder import slug
from airctl.ledger.writer import LedgerWriter
from airctl.modes import Mode
from airctl.pipeline.import_why import record_why_events
from airctl.pipeline.run.lifecycle import Run

PASS_PREFIXES = ("after:", "ge:after:")


@dataclass
class ImportRequest:
    paths: list[Path]
    out_dir: Path = Path("airctl-runs")
    mode: Mode | None = None  # None: what the files say (the log's options, the dump kinds), else max-autotune
    verify: bool = True
    report: bool = True


@dataclass
class ImportResult:
    ledger_dir: Path
    index: RunIndex
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"ledger": str(self.ledger_dir), "problems": self.problems, "notes": self.notes,
                "index": self.index.to_json()}


def import_artifacts(req: ImportRequest) -> ImportResult:
    paths = [Path(p) for p in req.paths]
    if not paths:
        raise GraphReadError("nothing to import", hint="give the folders or files TorchAir wrote")
    found = discover(paths)
    if found.empty and not found.profiles:
        skipped = f" ({len(found.skipped)} files skipped: not TorchAir's)" if found.skipped else ""
        raise GraphReadError(f"no TorchAir log, listing, dump or TORCH_COMPILE_DEBUG folder found{skipped}",
                             file=str(paths[0]),
                             hint="import what TorchAir wrote: its DEBUG log (stdout or torchair/debug.log), "
                                  "config.debug.graph_dump files, the torch_compile_debug/ folder, *_ascend_pt")
    plan = plan_import(found, req.mode)
    with Run.create(Path(req.out_dir).absolute(), f"import-{paths[0].resolve().name}", command="import",
                    mode=plan.mode, backend=None, model=None, execution=None) as run:
        ledger = run.ledger
        problems: list[str] = []
        empty: list[str] = []
        for graph in plan.graphs:
            if _write_graph(ledger, graph, problems) == 0 and graph.stages:
                empty.append(graph.id)
        read = {g.id for g in ledger.run_index.graphs if g.stages}
        if empty and not read and not found.profiles:  # nothing readable: fail before copying anything
            raise _unreadable(run, empty, problems, req.report, nothing=True)
        _copy_dumps(ledger, plan, read)
        logs = _copy_logs(ledger, plan)
        record_why_events(ledger, plan)
        if found.profiles:
            ledger.set(profiles=[_profile_entry(p) for p in found.profiles])
        notes = [*plan.notes, *(f"{g.id}: {n}" for g in plan.graphs for n in g.notes)]
        ledger.set(imported=_imported(paths, found, plan, logs, problems, notes))
        if req.verify:
            _verify(ledger, plan)
        if empty:  # some graph's every stage unreadable: say so loudly, keep what was read
            raise _unreadable(run, empty, problems, req.report)
        run.finish(report=req.report)  # ok, or (a full disk ate a snapshot) failed with `cannot write the ledger`
    return ImportResult(ledger.shown, ledger.run_index, problems, notes)


def _unreadable(run: Run, empty: list[str], problems: list[str], report: bool,
                nothing: bool = False) -> GraphReadError:
    """The import's failure when graphs had no stage that could be read: the ledger ends failed with
    what was read, and the error names the first problem (every file is in ``imported.problems``)."""
    first = problems[0] if problems else "nothing readable"
    error = GraphReadError(
        ("nothing could be imported: " if nothing else "") + f"no stage of graph {', '.join(empty)} could be read: "
        f"{first}",
        hint=f"the ledger {run.ledger.root} keeps what was read (imported.problems lists every file); the files are "
             "named as TorchAir's but do not hold what TorchAir writes, or airctl cannot read this TorchAir dump "
             "(a bug worth reporting, with the file)")
    run.fail(error, report=report)
    return error


def _write_graph(ledger: LedgerWriter, plan: GraphPlan, problems: list[str]) -> int:
    """The graph's stages into the ledger; how many were written."""
    written = 0
    ledger.graph(plan.id, plan.kind, name=plan.name, dynamo_graph=plan.k)
    extra: dict[str, Any] = {k: v for k, v in (("rank", plan.rank), ("pid", plan.pid)) if v is not None}
    if plan.mode != ledger.run_index.mode:
        extra["mode"] = plan.mode
    if plan.notes:
        extra["notes"] = plan.notes
    if extra:
        ledger.update_graph(plan.id, **extra)
    previous: Graph | None = None
    for source in plan.stages:
        try:
            graph = source.load()
        except GraphReadError as e:
            problems.append(f"{e} ({plan.id}, stage {source.name})")
            previous = None  # later 'unchanged' stages cannot share a graph that was not read
            continue
        changed = source.changed
        if source.how == "same":
            if previous is None:
                continue
            graph = previous
        elif changed is None and source.name.startswith(PASS_PREFIXES) and previous is not None \
                and previous.dialect == graph.dialect:
            changed = fingerprint(graph) != fingerprint(previous)
        assert graph is not None
        graph.name = plan.name if graph.dialect == "ge" and plan.name else (
            f"dynamo_{plan.k}" if source.name == "dynamo" else plan.id)
        text = None
        if changed is not False:
            text = source.readable() or (ge_ops_text(graph) if graph.dialect == "ge" else None)
        extra = {"fingerprint": fingerprint(graph)} if source.name == "fx-final" else {}
        ledger.add_stage(plan.id, source.name, graph, text=text, changed=changed, seconds=source.seconds,
                         imported_from=source.origin, **extra)
        written += 1
        previous = graph
    return written


def _dump_stage(graph: GraphPlan, which: str, type_: str) -> str:
    if not graph.mode.is_ge and type_ == "py":
        return f"aclgraph-{which}"
    return f"ge-{which}"


def _copy_dumps(ledger: LedgerWriter, plan: ImportPlan, read: set[str]) -> None:
    """TorchAir's dumps of the graphs that were read (``read``: their ids), gzip-compressed as they are copied."""
    target_dir = ledger.root / "torchair"
    for graph in plan.graphs:
        for dump in graph.dumps if graph.id in read else []:
            target = target_dir / (dump.path.name + ".gz")
            if target.exists():
                target = target_dir / f"{slug(graph.id)}-{dump.path.name}.gz"
            copy_compressed(dump.path, target)
            fields: dict[str, Any] = {"graph": graph.name, "type": dump.type,
                                      "stage": _dump_stage(graph, dump.which, dump.type),
                                      "written_by": "torchair", "source": str(dump.path.absolute())}
            if dump.rank is not None:
                fields["rank"] = dump.rank
            ledger.add_dump(target, **fields)
    for run in plan.artifacts.tcd_runs:
        for model in run.models:
            if model.output_code is not None:
                prefix = "" if model.package == "torchair" else f"{model.package}_"
                target = target_dir / (f"output_code_{prefix}{model.path.name}"
                                       f"{'_pid' + str(run.pid) if run.pid else ''}.py")
                copy_compressed(model.output_code, target := target.with_name(target.name + ".gz"))
                ledger.add_dump(target, graph=None, type="py", stage="generated-code", written_by="torchair",
                                source=str(model.output_code.absolute()))


def _copy_logs(ledger: LedgerWriter, plan: ImportPlan) -> list[dict[str, str]]:
    """Each log once, gzip-compressed as it is copied (a 1 GB DEBUG log costs a chunk of memory and a tenth
    of its size on disk); the first is the run's ``log``."""
    logs = [Path(log.path) for log in plan.logs]
    copied = []
    if logs:
        (ledger.root / "logs").mkdir(exist_ok=True)
    for i, log in enumerate(logs):
        name = f"logs/{i:02d}-{slug(log.name)}.gz"
        copy_compressed(log, ledger.root / name)
        copied.append({"source": str(log.absolute()), "file": name})
    ledger.set(log=copied[0]["file"] if copied else None)
    return copied


def _profile_entry(folder: Path) -> dict[str, Any]:
    files = sorted(str(f.relative_to(folder)) for f in folder.rglob("*") if f.is_file())
    return {"path": str(folder.absolute()), "files": files[:50], "file_count": len(files)}


def _imported(paths: list[Path], found: ArtifactSet, plan: ImportPlan, logs: list[dict[str, str]],
              problems: list[str], notes: list[str]) -> dict[str, Any]:
    return {
        "sources": [str(p.absolute()) for p in paths],
        "logs": logs,
        "ranks": plan.ranks,
        "pids": sorted({g.pid for g in plan.graphs if g.pid is not None}),
        "torch_compile_debug": [str(r.path.absolute()) for r in found.tcd_runs],
        "traces": [str(p.absolute()) for p in found.traces],
        "listings": [str(p.absolute()) for p in found.listings],
        "skipped": [f"{path}: {why}" for path, why in found.skipped[:100]],
        "notes": notes,
        "problems": problems,
    }


def _verify(ledger: LedgerWriter, plan: ImportPlan) -> None:
    """verify-each over the imported pass stages (as a compile's VerifyEachGraph), and what the log shows."""
    from airctl.ledger.reader import Ledger
    from airctl.verify.instrument import VerifyEach
    from airctl.verify.log_checks import log_findings

    reader = Ledger(ledger.root, ledger.run_index)
    rows: list[dict[str, Any]] = []
    for entry in ledger.run_index.graphs:
        mode = next((g.mode for g in plan.graphs if g.id == entry.id), plan.mode or Mode.MAX_AUTOTUNE)
        inst = VerifyEach(mode=mode)
        previous: Graph | None = None
        for ref in reader.stages(entry.id):
            if ref.dialect != "fx":
                continue
            graph = ledger.stage_graph(ref.entry)  # the graph written (in the background: not read back)
            if ref.name.startswith("after:") and previous is not None:
                name = ref.name[len("after:"):]
                inst.before_pass(name, previous)
                inst.after_pass(name, graph)
            previous = graph
        final, fixed = inst.verdict()  # the last stage's findings are the verdict (VerifyEachGraph)
        rows.extend({**finding.to_json(), "stage": stage, "graph": entry.id} for stage, finding in final)
        rows.extend({**finding.to_json(), "stage": stage, "graph": entry.id,
                     "fixed_by": by.removeprefix("after:")} for stage, finding, by in fixed)
    for graph in plan.graphs:
        if graph.unit is not None:
            for finding in log_findings(graph.unit, graph.log or "", graph.mode):
                rows.append({**finding.to_json(), "stage": "log", "graph": graph.id})
    ledger.set_findings(rows)
