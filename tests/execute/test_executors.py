"""airctl/execute/executors.py: one object owns settings, executor cache, recorder, pool and aclgraph graphs."""

from __future__ import annotations

import gc

import pytest

torch = pytest.importorskip("torch")

from tests.execute.test_executor import X, air_ops, eager, same, seed_gm  # noqa: E402, F401 - air_ops: fixture


def test_runs_report_to_the_recorder_of_the_block_and_nested_recorders_both_get_them() -> None:
    from airctl.execute.executors import Executors
    from airctl.execute.recorder import Recorder

    ex = Executors()
    gm = seed_gm()
    outer, inner = Recorder(), Recorder(keep_events=True)
    try:
        ex.run_acl(gm, [X], "before")  # no recorder: logged, nobody records
        with ex.recording(outer):
            ex.run_acl(gm, [X], "g")
            with ex.recording(inner):
                inner.start_step(0)
                out = ex.run_acl(gm, [X], "g")
            ex.run_acl(gm, [X], "g")
        assert ex.recorder is None
    finally:
        ex.close()
    assert same(out, eager(X))
    assert outer.timelines["g"].meta["runs"] == 3 and inner.timelines["g"].meta["runs"] == 1
    assert {(r.reader, r.producer) for _, r in outer.races} == {("add", "abs_1"), ("sub", "mm")}
    assert inner.timelines["g"].events and not outer.timelines["g"].events  # events: only the inner keeps them
    assert "before" not in outer.timelines


def test_two_owners_do_not_share_recorders() -> None:
    from airctl.execute.executors import Executors
    from airctl.execute.recorder import Recorder

    a, b = Executors(), Executors()
    ra, rb = Recorder(), Recorder()
    try:
        with a.recording(ra), b.recording(rb):
            a.run_acl(seed_gm(), [X], "in_a")
            b.run_acl(seed_gm(), [X], "in_b")
    finally:
        a.close()
        b.close()
    assert set(ra.timelines) == {"in_a"} and set(rb.timelines) == {"in_b"}


def test_executors_are_cached_per_graph_module_and_mode_and_take_current_settings() -> None:
    from airctl.execute.executors import Executors

    ex = Executors()
    gm = seed_gm(wait_before="add")
    first = ex.executor_for(gm, "reduce-overhead", "g")
    assert ex.executor_for(gm, "reduce-overhead", "g") is first
    assert ex.executor_for(gm, "max-autotune", "g") is not first
    with ex.configure(threads_per_stream=1, timeout_s=7.0, serial=True):
        again = ex.executor_for(gm, "reduce-overhead", "g")
        assert again is first and (again.threads_per_stream, again.timeout_s, again.serial) == (1, 7.0, True)
    after = ex.executor_for(gm, "reduce-overhead", "g")
    assert (after.threads_per_stream, after.timeout_s, after.serial) == (None, 60.0, False)
    assert after.pool is ex.pool()
    ex.close()
    assert after.pool.closed


def test_run_ge_returns_a_tuple_and_close_lets_graph_modules_go() -> None:
    import weakref

    from airctl.execute.executors import Executors

    ex = Executors()
    gm = seed_gm(wait_before="add")
    out = ex.run_ge(gm, [X], "g")
    assert isinstance(out, tuple) and same(out, eager(X))
    alive = weakref.ref(gm)
    ex.close()  # drops the cached executors, which hold their GraphModules
    del gm, out
    gc.collect()
    assert alive() is None
