"""Work set aside in a forked child (TorchAir's pbtxt of the optimized graph, written beside the compile):
it runs on the parent's objects as they were at the fork, the parent learns whether it succeeded, and
where there is no fork it runs in-process when waited for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from airctl.pipeline.aside import Aside

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


@needs_fork
def test_the_job_runs_in_a_child_on_the_objects_as_they_were_at_the_fork(tmp_path: Path) -> None:
    live = {"ops": ["a", "b"]}
    out = tmp_path / "graph.pbtxt"

    def job() -> None:
        live["ops"].append("written by the child")  # the child's copy: the parent never sees this
        out.write_text(f"{os.getpid()} " + ",".join(live["ops"]))

    aside = Aside(job)
    assert aside.forked
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
    assert not aside.forked and ran == []
    assert aside.wait() is True and ran == [os.getpid()]


def _writer(tmp_path: Path):
    from airctl.graph.model import Graph, Node
    from airctl.ledger.writer import LedgerWriter

    w = LedgerWriter.create(tmp_path, "texts", command="compile", mode="max-autotune")
    w.graph("1-inference", "inference")
    return w, Graph("g", "fx", [Node("x", "placeholder", kind="placeholder")])


@needs_fork
def test_a_stage_text_is_made_by_a_child_from_the_graph_as_it_was_and_put_in_place(tmp_path: Path) -> None:
    from airctl.io.compressed import read_bytes
    from airctl.pipeline.aside import ForkedText

    w, graph = _writer(tmp_path)
    code = ["def forward(x):"]
    made = ForkedText.start(lambda: "\n".join(code), w.root / "graphs" / ".text-0.txt.gz")
    assert isinstance(made, ForkedText)
    code.append("    return x  # changed after the fork: not in the text")
    stage = w.add_stage("1-inference", "aot-inference", graph, text=made.claim)
    w.finish()
    assert read_bytes(w.root / stage.text) == b"def forward(x):"
    assert sorted(p.name for p in (w.root / "graphs").iterdir() if p.is_file()) == []  # no scratch left


@needs_fork
def test_a_text_whose_child_failed_is_not_listed_and_leaves_no_file(tmp_path: Path) -> None:
    from airctl.pipeline.aside import ForkedText

    w, graph = _writer(tmp_path)

    def make() -> str:
        raise RuntimeError("print_readable failed")

    made = ForkedText.start(make, w.root / "graphs" / ".text-0.txt.gz")
    stage = w.add_stage("1-inference", "aot-inference", graph, text=made.claim)
    w.finish()
    assert stage.text is None and (w.root / stage.file).is_file()  # the snapshot stays
    assert any("could not be written" in n for n in w.run_index.notes)
    assert not list((w.root / "graphs" / "1-inference").glob("*.txt.gz"))
    assert not [p for p in (w.root / "graphs").iterdir() if p.is_file()]


@needs_fork
def test_a_text_no_stage_took_is_discarded(tmp_path: Path) -> None:
    from airctl.pipeline.aside import ForkedText

    scratch = tmp_path / ".text-0.txt.gz"
    made = ForkedText.start(lambda: "unused", scratch)
    assert isinstance(made, ForkedText) and not made.claimed
    made.discard()
    assert list(tmp_path.iterdir()) == []


def test_without_fork_a_text_is_made_in_process_at_once(tmp_path: Path, monkeypatch) -> None:
    from airctl.pipeline.aside import ForkedText

    monkeypatch.delattr(os, "fork", raising=False)
    assert ForkedText.start(lambda: "code", tmp_path / ".text-0.txt.gz") == "code"
    assert list(tmp_path.iterdir()) == []
