"""A run ends through its :class:`~airctl.pipeline.run.lifecycle.Run`, one way for every command: fail
(an AirctlError, or a message and its detail), finish (a status, the findings, the report), an
interrupt, a ledger another process left running. In-process and without torch: the signal sweeps
of whole commands are tests/run/test_lifecycle.py's."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from airctl.errors import AirctlError, ExecutionMismatch
from airctl.ledger.runs import latest_run
from airctl.ledger.writer import LedgerWriter
from airctl.pipeline.run.lifecycle import Run


def _index(out: Path) -> dict[str, Any]:
    (path,) = out.glob("*/index.json")
    return json.loads(path.read_text())


class _Capture:
    """What a run's capture hands its end (the Findings seam)."""

    compress_log = False

    def __init__(self, rows: list[dict[str, Any]] | None = None, interrupt: bool = False) -> None:
        self.rows, self.interrupt = rows or [], interrupt

    def findings(self) -> list[dict[str, Any]]:
        if self.interrupt:
            raise KeyboardInterrupt  # Ctrl-C while the run is being finished
        return self.rows


def test_fail_with_an_airctl_error_records_it_and_ends_the_run_current(tmp_path: Path) -> None:
    with Run.create(tmp_path, "m", command="compile") as run:
        run.fail(ExecutionMismatch("outputs differ", hint="diff the stages"), status="mismatch")
    index = _index(tmp_path)
    assert index["status"] == "mismatch" and index["error"] == "outputs differ"
    assert index["error_detail"]["hint"] == "diff the stages"
    assert latest_run(tmp_path) == run.ledger.root  # whatever the status, it is the current run


def test_fail_with_a_message_and_its_detail(tmp_path: Path) -> None:
    with Run.create(tmp_path, "m", command="run") as run:
        run.fail("the script exited with code 3", {"type": "ScriptError", "exit_code": 3})
    index = _index(tmp_path)
    assert index["status"] == "failed" and index["error_detail"] == {"type": "ScriptError", "exit_code": 3}


def test_finish_records_the_findings_and_writes_the_report_when_asked(tmp_path: Path) -> None:
    rows = [{"rule": "R3", "severity": "error", "graph": "1-inference", "stage": "fx-final"}]
    with Run.create(tmp_path / "a", "m", command="compile") as run:
        run.session = _Capture(rows)
        run.finish("planned", report=True)
    index = _index(tmp_path / "a")
    assert index["status"] == "planned" and index["findings"] == rows
    assert index["first_stage_with_finding"] == {"R3": "1-inference:fx-final"}
    assert index["report"] == "report.html" and (run.ledger.root / "report.html").is_file()
    with Run.create(tmp_path / "b", "m", command="compile") as run:
        run.finish()
    assert _index(tmp_path / "b")["status"] == "ok" and not (run.ledger.root / "report.html").exists()


def test_a_failed_run_stays_failed_when_finished(tmp_path: Path) -> None:
    with Run.create(tmp_path, "m", command="import") as run:
        run.ledger.fail("no stage could be read")
        run.finish()
    assert _index(tmp_path)["status"] == "failed"


def test_a_body_that_ends_nothing_is_ok_and_one_that_raises_is_failed(tmp_path: Path) -> None:
    with Run.create(tmp_path / "a", "m", command="compile"):
        pass
    assert _index(tmp_path / "a")["status"] == "ok"
    with pytest.raises(ValueError), Run.create(tmp_path / "b", "m", command="compile"):
        raise ValueError("a bug")
    index = _index(tmp_path / "b")
    assert index["status"] == "failed" and index["error"] == "ValueError: a bug"


def test_ctrl_c_while_finishing_marks_a_run_that_was_ending_ok_interrupted(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), Run.create(tmp_path / "a", "m", command="compile") as run:
        run.session = _Capture(interrupt=True)
        run.finish()
    assert _index(tmp_path / "a")["status"] == "interrupted"
    with pytest.raises(KeyboardInterrupt), Run.create(tmp_path / "b", "m", command="compile") as run:
        run.session = _Capture(interrupt=True)
        run.fail(AirctlError("TorchAir failed"))
    index = _index(tmp_path / "b")  # a failed run keeps its error
    assert index["status"] == "failed" and index["error"] == "TorchAir failed"


def test_adopt_ends_a_ledger_another_process_left_running(tmp_path: Path) -> None:
    writer = LedgerWriter.create_at(tmp_path / "ranks" / "1", command="compile")
    left = LedgerWriter(writer.root, writer.run_index)  # as the launcher reads it back
    Run.adopt(left).fail("the rank's process ended (SIGKILL)", {"type": "RankEnded"}, status="interrupted")
    index = json.loads((writer.root / "index.json").read_text())
    assert index["status"] == "interrupted" and index["error_detail"] == {"type": "RankEnded"}


def test_the_ledger_exists_only_inside_the_run(tmp_path: Path) -> None:
    run = Run.create(tmp_path, "m", command="compile")
    with pytest.raises(RuntimeError, match="before it is entered"):
        run.ledger  # noqa: B018 - the property raises
    assert not list(tmp_path.iterdir())


def test_every_run_is_a_redelivery_block_where_the_process_has_the_default_handlers(tmp_path: Path) -> None:
    """airctl as a library: the whole run, not only a compile, gets the handler that sends a dropped
    Ctrl-C again; the caller's handlers are back after it."""
    before = signal.getsignal(signal.SIGINT)
    assert before is signal.default_int_handler
    with Run.create(tmp_path, "m", command="import"):
        inside = signal.getsignal(signal.SIGINT)
    assert inside is not before and getattr(inside, "__self__", None).__class__.__name__ == "Redelivery"
    assert signal.getsignal(signal.SIGINT) is before
