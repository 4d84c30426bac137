"""``airctl profile`` of an imported ledger: run the GE graphs an NPU machine dumped, per stream, on the CPU.

``airctl import`` of GE dumps gives a ledger with no model script (docs/import.md): nothing to
compile. What it has is each graph's GE stages, and those run under sim from their own ops
(:mod:`airctl.execute.ge_program`): every op type mapped to a CPU kernel, ``_user_stream_label``
to a stream of the multi-stream executor, control edges across streams to waits. So profiling
such a ledger runs the last GE stage of each graph (``ge-optimized``, else the latest GE stage)
``warmup`` + ``steps`` times with the recorder keeping timed events, and writes the same files as
a model's profile into ``<ledger>/profile/`` (lanes per stream, sync edges, critical path).

Inputs are made from each ``Data`` op's descriptor (dtype and shape in the dump): floating
inputs random, integer and boolean inputs zeros. A dynamic dimension (``-1``) has no size to
make, and a Const whose payload the dump did not keep runs as zeros (noted): the timings are of
the graph's structure on a CPU, not of the NPU's kernels. A graph with op types sim has no
kernel for is not run: the error names every such type, its nodes and its graph.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError, LedgerError
from airctl.graph.model import Graph
from airctl.ledger.reader import Ledger
from airctl.modes import Mode
from airctl.pipeline.profile import ProfileOutcome, ProfileRun, timed_steps, write_timelines
from airctl.pipeline.profile_files import write_profile
from airctl.profile.summary import summarize
from airctl.profile.write import PROFILE_DIR

IMPORT_COMMAND = "import"


def imported_ledger(folder: Path) -> Path | None:
    """``folder`` when its run is an import (GE graphs, no model to compile: ``airctl profile`` runs
    them as they are), else None."""
    return folder if Ledger.open(folder).index.command == IMPORT_COMMAND else None


def ge_graphs(ledger: Ledger) -> list[tuple[str, Graph]]:
    """(graph id, its last GE stage) for every graph that has one."""
    found = []
    for gid in ledger.graph_ids():
        stages = [s for s in ledger.stages(gid) if s.name.startswith("ge")]
        preferred = [s for s in stages if s.name == "ge-optimized"] or stages[-1:]
        if preferred:
            found.append((gid, ledger.load(preferred[0])))
    return found


def check_runnable(graphs: list[tuple[str, Graph]], index_file: str) -> None:
    """Every op type sim cannot run, by graph, in one error (nothing runs then)."""
    from airctl.execute.ge_program import UNSUPPORTED_HINT, unsupported

    rows = []
    for gid, graph in graphs:
        for op, names in unsupported(graph).items():
            more = f", ... ({len(names)} nodes)" if len(names) > 3 else ""
            rows.append(f"{op} in graph {gid} ({', '.join(names[:3])}{more})")
    if rows:
        raise AirctlError(f"sim cannot run these GE op types of the imported graphs: {'; '.join(rows)}",
                          file=index_file, hint=UNSUPPORTED_HINT)


def make_inputs(gid: str, graph: Graph) -> list[Any]:
    """One tensor per ``Data`` op, in ``index`` order, from the dump's descriptors."""
    import torch

    from airctl.execute.ge_ops import torch_dtype

    data = sorted((n for n in graph.nodes if n.op in ("Data", "RefData")), key=lambda n: int(n.attrs.get("index", 0)))
    inputs = []
    for node in data:
        outs = node.meta.get("outputs") or []
        if not outs:
            raise AirctlError(f"graph {gid}: Data {node.name} has no dtype or shape in the dump", node=node.name,
                              hint="import the pbtxt or txt dump (the .py dump keeps no descriptors)")
        shape = [int(d) for d in outs[0].get("shape", [])]
        if any(d < 0 for d in shape):
            raise AirctlError(f"graph {gid}: Data {node.name} has a dynamic shape {shape}: sim cannot choose its "
                              "sizes", node=node.name, hint="profile a graph compiled with static shapes "
                                                            "(dynamic=False) on the NPU")
        dtype = torch_dtype(outs[0].get("dtype", 1), proto=True)
        inputs.append(torch.randn(shape).to(dtype) if dtype.is_floating_point else torch.zeros(shape, dtype=dtype))
    return inputs


def profile_imported(ledger_dir: Path, *, steps: int = 5, warmup: int = 1, png: bool = False, top: int = 10,
                     backend: str = "auto", progress: Callable[[str], None] | None = None) -> ProfileOutcome:
    """Run and profile the GE graphs of an imported ledger; the files go to ``<ledger>/profile/``."""
    from airctl.backends import choose
    from airctl.execute.ge_program import build
    from airctl.execute.recorder import Recorder
    from airctl.pipeline.run.execution import RunExecution

    say = progress or (lambda _msg: None)
    ledger = Ledger.open(ledger_dir)
    graphs = ge_graphs(ledger)
    if not graphs:
        raise LedgerError("the imported ledger has no GE stage to run", file=str(ledger.index_path),
                          hint="import GE dumps (dynamo_*_graph_*.pbtxt or .txt, config.debug.graph_dump)")
    check_runnable(graphs, str(ledger.index_path))
    chosen = choose(backend)
    if not chosen.graphs_run_on_cpu:
        raise AirctlError("profiling an imported ledger runs its GE graphs on airctl's CPU executor: the sim "
                          f"backend (this is {chosen.name})", hint="--backend sim, or `airctl profile analyze` "
                                                                  "of torch_npu's profiler folder on the NPU")
    runs = RunExecution(threads_per_stream=1)
    rec = Recorder(keep_events=False)
    step_seconds: list[float] = []
    notes: list[str] = []
    try:
        with chosen.session(runs), runs.recording(rec):
            programs = []
            for gid, graph in graphs:
                program = build(graph)
                notes.extend(f"graph {gid}: {n}" for n in program.notes)
                programs.append((gid, program, make_inputs(gid, graph)))

            def step() -> None:
                for gid, program, inputs in programs:
                    runs.executors.run_ge(program.gm, inputs, gid)

            timed_steps(step, rec, warmup, steps, say, into=step_seconds)
    finally:
        runs.close()
    run = ProfileRun(ledger_dir=Path(ledger_dir), timelines=list(rec.timelines.values()),
                     races=[r for _, r in rec.races], matches_eager=None, max_abs_error=None,
                     step_seconds=step_seconds, warnings=notes)
    write_timelines(run.timelines, step_seconds, Path(ledger_dir), {gid: gid for gid, _ in graphs})
    summary = summarize(run.timelines, races=list(run.races), step_seconds=step_seconds or None, top=top)
    summary.meta.update({"ledger": str(ledger_dir), "model": None, "mode": Mode.MAX_AUTOTUNE.value, "imported": True,
                         "notes": [*summary.meta.get("notes", []), "imported GE graphs run from their own ops "
                                   "on the CPU (docs/sim.md): structure and streams are the NPU's, times are not"]})
    write_profile(Path(ledger_dir) / PROFILE_DIR, run.timelines, summary,
                  title=f"{Path(ledger_dir).name} (imported GE graphs, sim)", png=png)
    return ProfileOutcome(summary=summary, runs=[run])
