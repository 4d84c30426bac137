"""What ``passes suggest`` says of each region it considered: how much moving it saves, and what runs
beside it in the replay (split from :mod:`airctl.pipeline.suggest`)."""

from __future__ import annotations

from typing import Any

from airctl.predict import candidate as cd
from airctl.predict import suggest as sg
from airctl.predict.plan import KERNEL
from airctl.predict.regions import Region


def gains(base: Any, dag: Any, regions: list[Region], tm: cd.Times, found: sg.SearchResult) -> dict[int, float]:
    """Per moved region: how much longer the step is with it back on the main stream."""
    out = {}
    for r, s in enumerate(found.best.assign):
        if s:
            assign = found.best.assign[:r] + (0,) + found.best.assign[r + 1:]
            plan, _ = cd.build(base, dag, regions, assign)
            out[r] = cd.step_us(plan, tm) - found.best.step_us
    return out


def beside(best: sg.Outcome, tm: cd.Times, regions: list[Region], names: list[str]) -> dict[int, str]:
    """Per moved region: what runs at the same time on other streams in the replay (modules, names)."""
    done = tm.replay(best.plan)
    tasks = best.plan.tasks
    kernels = [t for t in tasks if t.kind == KERNEL and tm.durations_us[t.index] > 0]
    out = {}
    for r, s in enumerate(best.assign):
        if not s:
            continue
        mine = [t for t in kernels if regions[r].mask >> t.index & 1]
        overlap: dict[str, float] = {}
        for o in kernels:
            if o.stream == names[s]:
                continue
            for t in mine:
                lo, hi = max(done.start_us[t.index], done.start_us[o.index]), min(done.end_us[t.index],
                                                                                    done.end_us[o.index])
                if hi > lo:
                    label = o.module or o.name
                    overlap[label] = overlap.get(label, 0.0) + hi - lo
        top = sorted(overlap, key=lambda k: -overlap[k])
        out[r] = ", ".join(top[:3]) + (f" (+{len(top) - 3} more)" if len(top) > 3 else "")
    return out


def region_row(r: Region, i: int, assign: tuple[int, ...], gains: dict[int, float], beside: dict[int, str],
                names: list[str]) -> dict[str, Any]:
    row: dict[str, Any] = {"region": r.key, "groups": r.labels, "work_us": r.work_us, "beside_us": r.beside_us}
    if assign[i]:
        row.update(stream=names[assign[i]], saved_us=gains.get(i), beside=beside.get(i))
    else:
        row.update(stream=None, why=r.reason or "moving it predicts no shorter step than the chosen plan")
    return row
