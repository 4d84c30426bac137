"""airctl/execute/pool.py: threads kept between jobs, a failing job keeps its worker, close ends them."""

from __future__ import annotations

import sys
import threading
import traceback

import pytest

from airctl.execute.pool import WorkerPool


def test_threads_are_reused_between_jobs() -> None:
    with WorkerPool() as pool:
        names = []
        for _ in range(3):
            job = pool.submit(lambda: names.append(threading.current_thread().ident))
            assert job.done.wait(5)
        assert pool.started == 1 and len(set(names)) == 1


def test_concurrent_jobs_get_their_own_threads() -> None:
    gate = threading.Barrier(3, timeout=5)
    with WorkerPool() as pool:
        jobs = [pool.submit(gate.wait) for _ in range(2)]
        gate.wait()  # both jobs are running at once, or this times out
        assert all(j.done.wait(5) for j in jobs) and pool.started == 2


def _where_workers_are(name: str) -> str:
    """The stacks of the pool's threads: what a job that never says it is done waits on."""
    frames = sys._current_frames()
    return "\n".join(f"{t.name} ({t.ident}):\n" + "".join(traceback.format_stack(frames[t.ident]))
                     for t in threading.enumerate() if t.name == name and t.ident in frames)


def test_a_failing_job_is_logged_and_its_worker_stays(caplog: pytest.LogCaptureFixture) -> None:
    """Failed once in a full run under load (the job not done after 5 s; not reproduced alone): the
    worker's stack is in the message, for the next time."""
    def boom() -> None:
        raise ValueError("boom")

    with WorkerPool(name="airctl-test-failing") as pool:
        assert pool.submit(boom).done.wait(30), _where_workers_are("airctl-test-failing")
        out: list[int] = []
        assert pool.submit(out.append, 1).done.wait(5)
        assert out == [1] and pool.started == 1
    assert any("worker job raised" in r.message for r in caplog.records)


def test_close_ends_idle_threads_and_refuses_new_jobs() -> None:
    pool = WorkerPool(name="airctl-test-pool")
    assert pool.submit(lambda: None).done.wait(5)
    pool.close()
    pool.close()  # idempotent
    for t in threading.enumerate():
        if t.name == "airctl-test-pool":
            t.join(5)
    assert not [t for t in threading.enumerate() if t.name == "airctl-test-pool"]
    with pytest.raises(RuntimeError, match="after close"):
        pool.submit(lambda: None)
