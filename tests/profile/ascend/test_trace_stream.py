"""The streaming Chrome-trace reader: the same events as ``json.loads``, whatever the chunk boundaries cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airctl.profile.ascend import trace_stream
from airctl.profile.ascend.model import ProfileReadError
from airctl.profile.ascend.trace_stream import iter_events

EVENTS = [{"ph": "X", "name": f"op{k} \u00e9\u4e2d \\\" ,]}}", "ts": f"{1000 + k}.125", "dur": k * 0.5, "pid": 1,
           "tid": k % 3, "args": {"Task Type": "AI_CORE", "nested": [[k], {"a": "]"}]}} for k in range(300)]


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("shape", ["list", "object", "trailing-comma", "pretty"])
def test_every_event_whatever_the_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int,
                                         shape: str) -> None:
    monkeypatch.setattr(trace_stream, "CHUNK", chunk)
    text = {"list": json.dumps(EVENTS), "pretty": json.dumps(EVENTS, indent=2, ensure_ascii=False),
            "object": json.dumps({"otherData": {"x": [1, {"y": "]"}]}, "traceEvents": EVENTS, "z": 1.5}),
            "trailing-comma": json.dumps(EVENTS)[:-1] + ",]"}[shape]
    path = tmp_path / "trace_view.json"
    path.write_text(text, encoding="utf-8")
    assert list(iter_events(path)) == EVENTS


@pytest.mark.parametrize("text, message", [
    ('[{"ph": "X"}, {"ph": ', "not valid JSON"),
    ('[{"ph": "X"} {"ph": "M"}]', "expected"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('"just a string"', "neither a list"),
    ('{"traceEvents": 3}', "neither a list"),
])
def test_broken_traces_are_clean_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "trace_view.json"
    path.write_text(text)
    with pytest.raises(ProfileReadError, match=message):
        list(iter_events(path))


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    import os

    path = tmp_path / "trace_view.json"
    os.mkfifo(path)
    with pytest.raises(ProfileReadError, match="FIFO"):
        list(iter_events(path))
