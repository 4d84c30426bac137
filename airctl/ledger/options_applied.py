"""The options a run was given, requested against applied (``airctl show --options``).

``--option KEY=VALUE`` is checked against the mode's config and set on it before TorchAir compiles
(:mod:`airctl.pipeline.compile.options`); what was set is the run's ``options``: each of them
reached the config TorchAir compiled with. Which stage an option changed is a comparison: the
latest other run of the same ``--out`` folder with the same model, mode and pass file whose
options differ from this run's only by options of this run (one without ``--option`` at all, say)
is the baseline, and each graph's stages are compared with its snapshot by snapshot. The first
stage whose graph differs is what the options changed; none differing is "no stage changed";
without a baseline run it is unknown, and the row says which command makes one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airctl.ledger.index import RunIndex
from airctl.ledger.reader import Ledger


def _same_target(a: RunIndex, b: RunIndex) -> bool:
    ma, mb = a.model or {}, b.model or {}
    return (ma.get("sha256") == mb.get("sha256") and a.run_mode == b.run_mode
            and a.passes_resolved == b.passes_resolved and ma.get("entry") == mb.get("entry"))


def baseline(led: Ledger) -> Ledger | None:
    """The newest other ok run of the folder compiling the same target with a subset of the options."""
    from airctl.ledger.runs import list_runs

    mine = led.index.options or {}
    for row in list_runs(led.root.parent):
        if Path(row.path).resolve() == led.root.resolve() or row.status not in ("ok", "mismatch"):
            continue
        try:
            other = Ledger.open(Path(row.path))
        except Exception:  # an unreadable run is no baseline  # noqa: BLE001
            continue
        theirs = other.index.options or {}
        if _same_target(led.index, other.index) and theirs != mine and all(
                mine.get(k) == v for k, v in theirs.items()) and other.index.graphs:
            return other
    return None


def first_changed_stage(led: Ledger, other: Ledger) -> str | None:
    """``<graph>/<stage>``: the first stage of either run whose graph differs, or None. Stages are
    paired by name; a pass that ran in one run only counts where it changed the graph there."""
    for gid in led.graph_ids():
        mine = led.stages(gid)
        theirs = {s.name: s for s in other.stages(gid)} if other.index.graph(gid) else {}
        if not theirs:
            return f"{gid} (no such graph in the other run)"
        names = {s.name for s in mine}
        found: list[tuple[int, str]] = [(s.index, f"{gid}/{s.name} (ran in the other run only)")
                                        for s in other.stages(gid) if s.name not in names and s.entry.changed][:1]
        for stage in mine:
            twin = theirs.get(stage.name)
            if twin is None and stage.entry.changed:
                found.append((stage.index, f"{gid}/{stage.name} (ran here only)"))
                break
            if twin is not None and led.load(stage).nodes != other.load(twin).nodes:
                found.append((stage.index, f"{gid}/{stage.name}"))
                break
        if found:
            return min(found)[1]
    if len(other.graph_ids()) != len(led.graph_ids()):
        return "the graphs (their number differs)"
    return None


def options_table(led: Ledger) -> dict[str, Any]:
    """``{"run", "baseline", "rows": [{option, value, set_in, reached, changed, stage}]}``."""
    options = led.index.options or {}
    base = baseline(led) if options else None
    rows: list[dict[str, Any]] = []
    stage = first_changed_stage(led, base) if base is not None else None
    extra = {k: v for k, v in options.items() if base is None or (base.index.options or {}).get(k) != v}
    for key, value in options.items():
        if base is None:
            changed = ("unknown: no run without it to compare (run the same command without "
                       f"--option {key})")
        elif key not in extra:
            changed = f"as in the baseline run {base.index.run_id}"
        else:
            together = f" (with {', '.join(k for k in extra if k != key)})" if len(extra) > 1 else ""
            changed = f"stage {stage}{together}" if stage else "no stage changed"
            changed += f" against run {base.index.run_id}"
        rows.append({"option": key, "value": value, "set_in": "--option (command line)", "reached": True,
                     "changed": changed, "stage": stage if base is not None and key in extra else None})
    return {"run": led.index.run_id, "baseline": base.index.run_id if base is not None else None, "rows": rows}
