"""The report's lane views and program orders worked out in a forked child (report/ahead.py) give the
same page as the one-process report; a child that fails leaves the parent to do the work."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from airctl.report import ahead as ahead_module
from airctl.report import write_report
from airctl.report.page import payload_of
from tests.report.ledgers import evil_ledger, make_ledger

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


def _payload(root: Path) -> dict:
    page = write_report(root)
    assert page is not None
    return payload_of(page.read_text(encoding="utf-8"))


def _forks(monkeypatch: pytest.MonkeyPatch, tiny: bool) -> list[int]:
    """Make every ledger big enough to fork (``tiny``) or none; returns the pids of the children made."""
    monkeypatch.setattr(ahead_module, "FORK_NODES", 0 if tiny else 10**12)
    made: list[int] = []
    real = ahead_module.Aside

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            if self._pid is not None:
                made.append(self._pid)

    monkeypatch.setattr(ahead_module, "Aside", Counting)
    return made


@needs_fork
@pytest.mark.parametrize("build", [make_ledger, evil_ledger], ids=["streams", "markup"])
def test_the_forked_report_equals_the_one_process_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         build: object) -> None:
    root = build(tmp_path)  # type: ignore[operator]
    made = _forks(monkeypatch, tiny=False)
    alone = _payload(root)
    assert made == []
    made = _forks(monkeypatch, tiny=True)
    forked = _payload(root)
    assert len(made) == 1
    assert forked == alone
    lanes = [s["lanes"] for g in forked["groups"] for s in g["snapshots"]]
    assert lanes and all(lane is not None for lane in lanes)
    if build is make_ledger:  # its stream pass ties record, wait and scope nodes to their ops
        assert any(s["edges"]["order"] for g in forked["groups"] for s in g["snapshots"])


@needs_fork
def test_a_child_that_fails_leaves_the_work_to_the_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_ledger(tmp_path)
    _forks(monkeypatch, tiny=False)
    alone = _payload(root)
    made = _forks(monkeypatch, tiny=True)

    def broken(self: object) -> bytes:
        raise RuntimeError("the child's verifier crashed")

    monkeypatch.setattr(ahead_module.Ahead, "_work", broken)
    assert _payload(root) == alone
    assert len(made) == 1


def test_only_ledgers_of_many_nodes_fork() -> None:
    assert not ahead_module.worth_forking([100, None, 200])
    assert ahead_module.worth_forking([ahead_module.FORK_NODES // 2, ahead_module.FORK_NODES // 2])
