"""Hand-built Timelines for the profile tests (times in ms, written as seconds)."""

from __future__ import annotations

from airctl.execute.timeline import OpEvent, Race, SyncEdge, Timeline

MS = 1e-3


def seed_two_streams(steps: int = 1, skew: float = 0.0) -> Timeline:
    """The seed example with its pass: mm, abs, record on stream_1; add, wait, sub on default.

    Per step (ms): stream_1 mm 0-2, abs 2-3, record at 3; default add 0.5-1.5, wait 1.5-3.1
    (blocked), sub 3.1-4. Busy: default 1.9, stream_1 3.0; span 4; overlap 1.0."""
    events, syncs = [], []
    for s in range(steps):
        d = skew * s
        events += [
            OpEvent("mm", "aten.mm.default", "stream_1", 0.0, 2 * MS + d, "seed.py:8", step=s),
            OpEvent("abs_1", "aten.abs.default", "stream_1", 2 * MS + d, 3 * MS + d, "seed.py:9", step=s),
            OpEvent("record", "air.record.default", "stream_1", 3 * MS + d, 3 * MS + d, step=s),
            OpEvent("add", "aten.add.Tensor", "default", 0.5 * MS, 1.5 * MS, "seed.py:10", step=s),
            OpEvent("wait", "air.wait.default", "default", 1.5 * MS, 3.1 * MS + d, step=s),
            OpEvent("sub", "aten.sub.Tensor", "default", 3.1 * MS + d, 4 * MS + d, "seed.py:11", step=s),
        ]
        syncs.append(SyncEdge("record_wait", "record", "wait", "stream_1", "default", 3.1 * MS + d, s))
    return Timeline("graph_1", "max-autotune", events, syncs, steps=steps,
                    step_seconds=[4.2 * MS + skew * s for s in range(steps)])


def single_stream() -> Timeline:
    """The seed example without passes: everything on the default stream, 0-4 ms, no gaps."""
    events = [OpEvent("mm", "aten.mm.default", "default", 0.0, 2 * MS, "seed.py:8"),
              OpEvent("abs_1", "aten.abs.default", "default", 2 * MS, 3 * MS, "seed.py:9"),
              OpEvent("add", "aten.add.Tensor", "default", 3 * MS, 4 * MS, "seed.py:10"),
              OpEvent("sub", "aten.sub.Tensor", "default", 4 * MS, 5 * MS, "seed.py:11")]
    return Timeline("graph_1", "max-autotune", events, steps=1, step_seconds=[5.2 * MS])


def with_race(name: str = "sub") -> Timeline:
    t = seed_two_streams()
    t.syncs = []
    t.races = [Race(name, "mm", "default", "stream_1", "seed.py:11", "seed.py:8", "reads mm before it is ordered")]
    return t
