"""The CUDA path's stream/event calls, with torch.cuda's Stream/Event replaced by recorders.

This machine's torch has no CUDA: the test checks which streams wait for which events, not GPU
numerics (the values are computed on the CPU as usual)."""

from __future__ import annotations

import contextlib

import pytest

from tests.execute.test_executor import X, eager, seed_gm

torch = pytest.importorskip("torch")


@pytest.fixture()
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    from airctl.sim.session import load_torchair

    load_torchair()
    log: list[tuple] = []

    class Stream:
        count = 0

        def __init__(self) -> None:
            Stream.count += 1
            self.id = f"s{Stream.count}"

        def wait_stream(self, other: Stream) -> None:
            log.append(("wait_stream", self.id, other.id))

        def wait_event(self, event: Event) -> None:
            log.append(("wait_event", self.id, event.id))

    class Event:
        count = 0

        def __init__(self) -> None:
            Event.count += 1
            self.id = f"e{Event.count}"

        def record(self, stream: Stream) -> None:
            log.append(("record", self.id, stream.id))

    current = Stream()
    monkeypatch.setattr(torch.cuda, "current_stream", lambda: current)
    monkeypatch.setattr(torch.cuda, "Stream", Stream)
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "stream", lambda s: contextlib.nullcontext())
    return log


def _run(mode: str, wait_before: str | None):
    from airctl.execute.cuda import CudaStreamExecutor
    from airctl.execute.recorder import Recorder

    rec = Recorder()
    out = CudaStreamExecutor(seed_gm(wait_before=wait_before), mode, "g", recorder=rec).run([X])
    assert all(torch.allclose(a, b) for a, b in zip(out, eager(X), strict=True))
    return {(r.reader, r.producer) for _, r in rec.races}


def test_racy_plan_gets_no_event_and_is_reported(fake_cuda: list[tuple]) -> None:
    assert _run("reduce-overhead", None) == {("add", "abs_1"), ("sub", "mm")}
    assert fake_cuda == [("wait_stream", "s2", "s1"), ("wait_stream", "s1", "s2")]  # fork and join only


def test_record_wait_becomes_an_event(fake_cuda: list[tuple]) -> None:
    assert _run("reduce-overhead", "add") == set()
    assert fake_cuda == [("wait_stream", "s2", "s1"), ("record", "e1", "s2"), ("wait_event", "s1", "e1"),
                         ("wait_stream", "s1", "s2")]


def test_max_autotune_data_edges_get_events(fake_cuda: list[tuple]) -> None:
    assert _run("max-autotune", None) == set()
    waits = [entry for entry in fake_cuda if entry[0] == "wait_event"]
    assert len(waits) == 2 and all(w[1] == "s1" for w in waits)
