"""Work set aside in a forked child (TorchAir's pbtxt of the optimized graph, written beside the compile):
it runs on the parent's objects as they were at the fork, the parent learns whether it succeeded, and
where there is no fork it runs in-process when waited for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from airctl.aside import Aside

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


@needs_fork
def test_the_job_runs_in_a_child_on_the_objects_as_they_were_at_the_fork(tmp_path: Path) -> None:
    live = {"ops": ["a", "b"]}
    out = tmp_path / "graph.pbtxt"

    def job() -> None:
        live["ops"].append("written by the child")  # the child's copy: the parent never sees this
        out.write_text(f"{os.getpid()} " + ",".join(live["ops"]))

    aside = Aside(job)
    live["ops"].append("c")  # a change after the fork: not in the child's file
    assert aside.wait() is True
    pid, ops = out.read_text().split(" ", 1)
    assert int(pid) != os.getpid() and ops == "a,b,written by the child"
    assert live["ops"] == ["a", "b", "c"]
    assert aside.wait() is True  # asking again does not wait again


@needs_fork
def test_a_job_that_raises_is_reported_as_failed_not_raised_in_the_parent() -> None:
    def job() -> None:
        raise RuntimeError("the renderer failed")

    assert Aside(job).wait() is False


def test_without_fork_the_job_runs_in_process_when_waited_for(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delattr(os, "fork", raising=False)
    ran: list[int] = []
    aside = Aside(lambda: ran.append(os.getpid()))
    assert ran == []
    assert aside.wait() is True and ran == [os.getpid()]


@needs_fork
def test_a_job_hands_back_bytes_from_the_child() -> None:
    aside = Aside(lambda: f"{os.getpid()}".encode() + b"x" * 200_000, returns=True)  # more than a pipe holds
    data = aside.result()
    assert data is not None and data.endswith(b"x" * 200_000)
    assert int(data[:-200_000]) != os.getpid()


@needs_fork
def test_a_job_that_fails_in_the_child_hands_back_none() -> None:
    def job() -> bytes:
        raise ValueError("no")

    aside = Aside(job, returns=True)
    assert aside.result() is None


def test_without_fork_the_job_runs_when_its_result_is_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "fork", raising=False)
    ran: list[int] = []

    def job() -> bytes:
        ran.append(os.getpid())
        return b"inline"

    aside = Aside(job, returns=True)
    assert ran == []
    assert aside.result() == b"inline"
    assert ran == [os.getpid()]
