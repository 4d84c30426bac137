"""Link what :mod:`airctl.io.artifacts` found into one plan per compiled graph, as a ledger holds them.

Three kinds of evidence name a graph, each in its own way:

- a log unit (:mod:`airctl.io.torchair_log`): process id and ``graph_N`` ("Get graph graph_N", else
  the unit's order in its process), and the ``model__K`` folder it was saved to;
- a TORCH_COMPILE_DEBUG ``model__K/<phase>``: linked through the log's "Full debug info saved
  to" lines; without a log, by the bytes of its ``original_ge_graph`` (the same file TorchAir
  dumps as ``dynamo_original_graph_N``), else by TorchAir's compile order (forward graphs in
  ``K`` order, then backward graphs in reverse: their compiles run lazily, LIFO);
- a GE dump: ``graph_N``, rank and pid from its name.

Graphs are keyed by (process, ``graph_N``); evidence without a process joins the one process
there is. Each graph gets its kind (``backward`` from the phase; ``forward`` when its process has
a backward graph, else ``inference``), its Dynamo graph number ``k`` (``model__K`` + 1, else
counted, backward graphs pairing with the latest open forward graph as in ``airctl compile``)
and its ledger id ``<k>-<kind>`` (``rank<R>-<k>-<kind>`` when the files name several ranks).
The stages themselves come from :mod:`airctl.importer.stages`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from airctl.importer.stages import GraphPlan, graph_stages
from airctl.io.artifacts import ArtifactSet, TcdModel, TcdRun
from airctl.io.torchair_log import FX_PASSES, TorchAirLog, read_torchair_log
from airctl.modes import Mode


@dataclass
class ImportPlan:
    graphs: list[GraphPlan]
    logs: list[TorchAirLog]
    artifacts: ArtifactSet
    mode: Mode | None
    notes: list[str] = field(default_factory=list)

    @property
    def ranks(self) -> list[int]:
        return sorted({g.rank for g in self.graphs if g.rank is not None})


def _digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class _Linker:
    def __init__(self, found: ArtifactSet) -> None:
        self.found = found
        self.graphs: dict[tuple[int | None, str], GraphPlan] = {}
        self.ranks: dict[int, int] = {}  # pid -> rank

    def graph(self, pid: int | None, name: str) -> GraphPlan:
        key = (pid, name)
        if key not in self.graphs:
            self.graphs[key] = GraphPlan(pid, name)
        return self.graphs[key]

    def logs(self) -> list[TorchAirLog]:
        paths = [*self.found.logs, *(r.debug_log for r in self.found.tcd_runs if r.debug_log)]
        logs = [read_torchair_log(p) for p in paths]
        for log in logs:
            for unit in log.units:
                if unit.name is None:
                    continue
                plan = self.graph(unit.pid, unit.name)
                if plan.unit is None:  # the same records in stdout and in debug.log: the first wins
                    plan.unit, plan.log, plan.phase = unit, log.path, unit.phase
        return logs

    def dumps(self) -> None:
        for dump in self.found.dumps:
            if dump.pid is not None and dump.rank is not None:
                self.ranks.setdefault(dump.pid, dump.rank)
            self.graph(dump.pid, dump.graph).dumps.append(dump)

    def tcd(self) -> None:
        for run in self.found.tcd_runs:
            if run.pid is not None and run.rank is not None:
                self.ranks.setdefault(run.pid, run.rank)
            claimed = self._by_log(run)
            rest = [(m, phase) for m in run.models for phase in m.phases if (m.path.name, phase) not in claimed]
            if rest:
                self._by_content_or_order(run, rest)

    def _by_log(self, run: TcdRun) -> set[tuple[str, str]]:
        claimed: set[tuple[str, str]] = set()
        models = {m.path.name: m for m in run.models}
        owners: dict[tuple[str, str], GraphPlan] = {}
        for plan in self.graphs.values():
            unit = plan.unit
            if unit is None or unit.debug_dir is None or (run.pid is not None and unit.pid != run.pid):
                continue
            folder = Path(unit.debug_dir).name
            phase = unit.phase or "forward"
            if folder in models and phase in models[folder].phases:
                earlier = owners.get((folder, phase))
                if earlier is not None:  # TorchAir reused the folder: the later graph's files overwrote these
                    earlier.tcd = None
                    earlier.notes.append(f"its TORCH_COMPILE_DEBUG files in {folder}/{phase} were overwritten by "
                                         f"{plan.name}'s (TorchAir writes both backward graphs there)")
                owners[(folder, phase)] = plan
                plan.tcd = (models[folder], phase)
                claimed.add((folder, phase))
        return claimed

    def _by_content_or_order(self, run: TcdRun, rest: list[tuple[TcdModel, str]]) -> None:
        originals = {}
        for dump in self.found.dumps:
            if dump.which == "original" and (run.pid is None or dump.pid in (None, run.pid)):
                originals.setdefault(_digest(dump.path), dump)
        order = sorted((x for x in rest if x[1] != "backward"), key=lambda x: x[0].k) + \
            sorted((x for x in rest if x[1] == "backward"), key=lambda x: -x[0].k)
        taken = {p.name for p in self.graphs.values() if p.tcd is not None and p.pid == run.pid}
        number = 0
        for model, phase in order:
            ge = next((f for f in model.phases[phase] if f.what == "original_ge_graph"), None)
            match = originals.get(_digest(ge.path)) if ge is not None else None
            if match is not None:
                name, how = match.graph, "the bytes of its original GE graph"
            else:
                number += 1
                while f"graph_{number}" in taken:
                    number += 1
                name, how = f"graph_{number}", "TorchAir's compile order (no log names it)"
            taken.add(name)
            plan = self.graph(match.pid if match is not None else run.pid, name)
            plan.tcd, plan.phase = (model, phase), plan.phase or phase
            plan.notes.append(f"{model.path.name}/{phase} linked to {name} by {how}")

    def standalone(self) -> None:
        for paths, what in ((self.found.listings, "fx-listing"), (self.found.fx_code, "fx-code"),
                            (self.found.graph_files, "graph")):
            for path in paths:
                self.graph(None, path.stem).files.append((path, what))

    def merge_unknown_pids(self) -> None:
        """Dumps or TCD runs whose pid the log does not share, or files with no pid: one process only."""
        pids = {pid for pid, _ in self.graphs if pid is not None}
        if len(pids) != 1:
            return
        (pid,) = pids
        for (p, name), plan in list(self.graphs.items()):
            if p is None and (pid, name) in self.graphs:
                target = self.graphs[(pid, name)]
                target.dumps += plan.dumps
                target.tcd = target.tcd or plan.tcd
                target.files += plan.files
                del self.graphs[(p, name)]
            elif p is None:
                plan.pid = pid


def _number(name: str | None) -> int:
    tail = (name or "").rpartition("_")[2]
    return int(tail) if tail.isdigit() else 1 << 30


def _assign_ids(graphs: list[GraphPlan]) -> None:
    by_pid: dict[int | None, list[GraphPlan]] = {}
    for g in graphs:
        by_pid.setdefault(g.pid, []).append(g)
    for group in by_pid.values():
        group.sort(key=lambda g: (_number(g.name), g.name or ""))
        training = any(g.phase in ("backward", "joint") for g in group)
        open_forward: list[GraphPlan] = []
        used = {g.tcd[0].k + 1 for g in group if g.tcd is not None and g.phase != "backward"}
        counter = 0
        for g in group:
            g.kind = "backward" if g.phase == "backward" else ("forward" if training else "inference")
            if g.kind == "backward" and open_forward:
                g.k = open_forward[-1].k  # not model__K: TorchAir files backward graphs under the latest model
            elif g.tcd is not None:
                g.k = g.tcd[0].k + 1
            else:
                counter = max([counter, *used]) + 1
                used.add(counter)
                g.k = counter
            if g.kind == "forward":
                open_forward.append(g)
            elif g.kind == "backward":
                match = next((f for f in reversed(open_forward) if f.k == g.k), None)
                if match is not None:
                    open_forward.remove(match)
    ranks = {g.rank for g in graphs if g.rank is not None}
    seen: set[str] = set()
    for g in sorted(graphs, key=lambda g: (g.rank or 0, g.k, g.kind != "backward")):
        base = f"{g.k}-{g.kind}"
        gid = f"rank{g.rank}-{base}" if len(ranks) > 1 and g.rank is not None else base
        if gid in seen:
            gid = f"{gid}-pid{g.pid}" if g.pid is not None else f"{gid}-{g.name}"
        while gid in seen:
            gid += "_"
        seen.add(gid)
        g.id = gid


def plan_import(found: ArtifactSet, mode: Mode | None = None) -> ImportPlan:
    """One :class:`GraphPlan` per compiled graph in ``found`` (see the module docstring)."""
    linker = _Linker(found)
    logs = linker.logs()
    linker.dumps()
    linker.tcd()
    linker.standalone()
    linker.merge_unknown_pids()
    graphs = sorted(linker.graphs.values(), key=lambda g: (g.pid or 0, _number(g.name)))
    for g in graphs:
        g.rank = linker.ranks.get(g.pid) if g.pid is not None else None
        if g.rank is None:
            g.rank = next((d.rank for d in g.dumps if d.rank is not None), None)
        g.phase = g.phase or _phase_from_dumps(g)
    _assign_ids(graphs)
    log_modes = {log.path: log.mode for log in logs}
    detected = [_mode_of(g, log_modes) for g in graphs]
    fallback = next((m for m in detected if m), None) or Mode.MAX_AUTOTUNE
    notes: list[str] = []
    for g, seen in zip(graphs, detected, strict=True):
        g.mode = mode or seen or fallback
        if mode and seen and mode != seen:
            g.notes.append(f"--mode {mode} given; its files look like {seen}")
        g.stages = graph_stages(g, g.mode)
    modes = list(dict.fromkeys(g.mode for g in graphs))
    if len(modes) > 1:
        notes.append(f"the graphs were compiled in different modes ({', '.join(modes)}); each graph keeps its own")
    used_mode = mode or (modes[0] if modes else fallback)
    graphs.sort(key=lambda g: (g.rank or 0, g.pid or 0, _number(g.name), g.id))  # TorchAir's compile order
    return ImportPlan(graphs, logs, found, used_mode, notes)


_AOT_INPUT = re.compile(r"""["'](?P<kind>tangents|primals)_\d+["']""")


def _phase_from_dumps(g: GraphPlan) -> str | None:
    """AOT names a training graph's inputs ``primals_N`` (forward) and ``tangents_N`` (backward), and
    TorchAir names the GE Data ops after them; inference inputs are ``argN_M``."""
    for dump in g.dumps:
        if dump.which != "original":
            continue
        try:
            with open(dump.path, encoding="utf-8", errors="replace") as handle:
                kinds = {m["kind"] for m in _AOT_INPUT.finditer(handle.read(4 << 20))}
        except OSError:
            continue
        if kinds:
            return "backward" if "tangents" in kinds else "forward"
    return None


def _mode_of(g: GraphPlan, log_modes: dict[str, Mode | None]) -> Mode | None:
    """The mode the graph's own files show: its log's options, else what TorchAir wrote for it."""
    if g.log is not None and log_modes.get(g.log):
        return log_modes[g.log]
    if g.tcd is not None:
        model, phase = g.tcd
        if model.package == "npugraph_ex":  # its own debug folder: npugraph_ex/model__K
            return Mode.NPUGRAPH_EX
        files = model.phases[phase]
        if any(f.what.endswith("ge_graph") for f in files):
            return Mode.MAX_AUTOTUNE
        if model.output_code is not None or any(f.pass_name and f.pass_name not in FX_PASSES for f in files):
            return Mode.REDUCE_OVERHEAD
    if any(d.type == "py" and _is_fx_code(d.path) for d in g.dumps):
        return Mode.REDUCE_OVERHEAD
    return Mode.MAX_AUTOTUNE if g.dumps else None


def _is_fx_code(path: Path) -> bool:
    from airctl.io.fx_code import is_fx_code

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return is_fx_code(handle.read(4096))
    except OSError:
        return False
