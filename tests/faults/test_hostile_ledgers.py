"""Issue 33, the second reliability round: hostile run folders, huge or odd files, tools that hang.

Each test is one defect of the audit (docs/reliability.md lists them): it failed before the fix. Ledgers are
made by `airctl import` of a small GE dump (a second, no TorchAir compile), then damaged by hand.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from airctl.ledger.runs import LATEST, latest_run, list_runs, mark_latest
from tests.conftest import REPO
from tests.faults.in_process import DUMP, airctl, no_traceback


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    out = tmp_path / "runs"
    no_traceback(airctl("import", DUMP, "--out", out, "--no-report"), 0)
    return out


def the_run(out: Path) -> Path:
    (root,) = [p for p in out.iterdir() if p.is_dir()]
    return root


# -- latest ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [1 << 20, 200 << 20])
def test_latest_full_of_nul_bytes_is_refused_unread(runs: Path, size: int) -> None:
    with (runs / LATEST).open("wb") as f:
        f.truncate(size)  # sparse: 200 MB of NULs on no disk
    t0 = time.perf_counter()
    text = no_traceback(airctl("show", "--out", runs), 2)
    assert time.perf_counter() - t0 < 10 and len(text) < 1000, len(text)
    assert "too large for a current-run pointer" in text and "\\x00" not in text


def test_latest_holding_dotdot_is_not_the_parent(runs: Path) -> None:
    (runs.parent / "index.json").write_text(json.dumps({"graphs": []}))  # --out's parent looks like a ledger
    (runs / LATEST).write_text("..\n")
    text = no_traceback(airctl("show", "--out", runs), 2)
    assert "does not hold a run id: '..'" in text
    with pytest.raises(Exception, match="does not hold a run id"):
        latest_run(runs)


def test_latest_as_a_link_to_a_system_file_is_not_read(runs: Path) -> None:
    (runs / LATEST).unlink()
    (runs / LATEST).symlink_to("/etc/passwd")
    text = no_traceback(airctl("show", "--out", runs), 2)
    assert "root:" not in text and "a link, where airctl expects a file it wrote" in text


def test_latest_as_a_fifo_does_not_block(runs: Path) -> None:
    (runs / LATEST).unlink()
    os.mkfifo(runs / LATEST)
    text = no_traceback(airctl("show", "--out", runs), 2)
    assert "not a regular file (a FIFO)" in text
    assert [r.current for r in list_runs(runs)] == [False]  # `airctl runs` still lists the run


def test_a_full_disk_moves_latest_in_place_and_leaves_no_temp(runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_open = builtins.open

    def full_disk(file, mode="r", *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if "x" in mode and ".tmp" in str(file):
            handle = real_open(file, mode, *args, **kwargs)  # created, then the write fails
            handle.close()
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(file, mode, *args, **kwargs)

    failed = runs / "20991231-235959-failed-run-0000"
    failed.mkdir()
    (failed / "index.json").write_text(json.dumps({"graphs": [], "status": "failed"}))
    monkeypatch.setattr(builtins, "open", full_disk)
    mark_latest(runs, failed.name)
    monkeypatch.undo()
    assert latest_run(runs) == failed, "the failed run is the current one"
    assert not [p for p in runs.iterdir() if p.name.endswith(".tmp")], "no temporary file left"


# -- stage files and index.json ----------------------------------------------------------------------------
@pytest.mark.slow
def test_a_stage_file_that_is_a_fifo_is_refused_not_waited_on(runs: Path) -> None:
    root = the_run(runs)
    index = json.loads((root / "index.json").read_text())
    stage = root / index["graphs"][0]["stages"][0]["file"]
    stage.unlink()
    os.mkfifo(stage)
    proc = subprocess.run([sys.executable, "-m", "airctl", "dump", str(root)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2 and "not a regular file (a FIFO)" in proc.stderr, proc.stderr


def test_runs_on_an_index_nested_200k_levels(runs: Path) -> None:
    (the_run(runs) / "index.json").write_text("[" * 200_000 + "]" * 200_000)
    text = no_traceback(airctl("runs", "--out", runs), 0)
    assert "unreadable" in text
    text = no_traceback(airctl("show", "--out", runs), 2)
    assert "nested too deeply" in text


def test_a_newer_index_version_warns_and_keeps_unknown_fields(runs: Path, caplog: pytest.LogCaptureFixture) -> None:
    from airctl.ledger.index import RunIndex
    from airctl.ledger.reader import Ledger

    path = the_run(runs) / "index.json"
    data = json.loads(path.read_text())
    data.update(version=99, from_the_future={"x": [1, 2]})
    data["graphs"][0]["future_graph_field"] = 7
    path.write_text(json.dumps(data))
    with caplog.at_level("WARNING", logger="airctl"):
        ledger = Ledger.open(path.parent)
    assert "index version 99 is newer" in caplog.text
    again = ledger.index.to_json()  # what a rewrite writes
    assert again["from_the_future"] == {"x": [1, 2]} and again["graphs"][0]["future_graph_field"] == 7
    assert RunIndex.read(again).to_json() == again


# -- external commands -------------------------------------------------------------------------------------
def _verdict(cmd: str, tmp_path: Path, timeout_s: float = 600.0):  # noqa: ANN202
    from types import SimpleNamespace

    from airctl.pipeline.bisect.conditions import Condition

    result = SimpleNamespace(index=SimpleNamespace(status="ok", error=None), ledger_dir=tmp_path)
    return Condition.make(bad_cmd=cmd, cmd_timeout_s=timeout_s).judge(result)


def test_bad_cmd_printing_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    verdict = _verdict("printf 'bad \\377\\376 bytes\\n'; exit 1", tmp_path)
    assert verdict.bad and "bad \ufffd\ufffd bytes" in verdict.why


def test_a_hanging_bad_cmd_is_killed_with_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    t0 = time.perf_counter()
    verdict = _verdict(f"sh -c 'echo $$ > {pidfile}; exec sleep 60' & wait", tmp_path, timeout_s=1.0)
    assert time.perf_counter() - t0 < 10
    assert verdict.unresolved and "--cmd-timeout 1 s" in verdict.why
    assert not _running(int(pidfile.read_text())), "no orphan left running"


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed orphan waits for init to reap it)."""
    time.sleep(0.3)
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("args", [["--max-compiles", "-1"], ["--max-compiles", "0"], ["--atol", "nan"],
                                  ["--bad-cmd", "true", "--cmd-timeout", "0"],
                                  ["--bad-cmd", "true", "--cmd-timeout", "-5"]])
def test_bisect_options_are_checked_before_any_folder(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "runs"
    r = airctl("bisect", REPO / "fixtures" / "models" / "seed.py", "--out", out, *args)
    assert r.exit_code == 2, r.output
    assert not out.exists() or not any(out.iterdir()), "no empty bisect folder left"


def test_bisect_help_shows_the_command_timeout() -> None:
    r = airctl("bisect", "--help")
    assert "--cmd-timeout" in r.stdout and "600" in r.stdout


# -- outputs -----------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_output_to_dev_full_is_a_clean_error(runs: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for args in (["dump", the_run(runs)], ["show", "--out", runs, "--json"]):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([sys.executable, "-m", "airctl", *map(str, args)], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=60, env=env)
        assert proc.returncode == 2 and "cannot write the output (No space left on device)" in proc.stderr, proc.stderr
    # naming the device with -o is refused before anything is written (one output guard: issue 63)
    text = no_traceback(airctl("dump", the_run(runs), "-o", "/dev/full", "--force"), 2)
    assert "refusing to write -o /dev/full: it is a character device" in text


def test_dot_into_a_folder_that_cannot_be_written_names_the_file(runs: Path) -> None:
    text = no_traceback(airctl("dump", the_run(runs), "--type", "svg", "-o", "/proc/airctl/x.svg"), 2)
    assert "/proc/airctl/x.svg" in text and "dot failed" not in text


# -- repro bundles -----------------------------------------------------------------------------------------
def test_a_bundle_is_whole_or_absent_and_of_one_mode(tmp_path: Path) -> None:
    from airctl.pipeline.bisect.repro import _bundle

    final = tmp_path / "repro"
    with pytest.raises(RuntimeError), _bundle(final) as work:
        (work / "half.safetensors").write_bytes(b"x")
        raise RuntimeError("refused")
    assert not final.exists() and list(tmp_path.iterdir()) == [], "a refused reproducer leaves nothing"
    with _bundle(final) as work:
        (work / "inputs.safetensors").write_bytes(b"x")
        (work / "inputs.safetensors").chmod(0o600)  # as safetensors writes it
        (work / "README.md").write_text("x")
        (work / "run.sh").write_text("x")
    modes = {p.name: p.stat().st_mode & 0o777 for p in final.iterdir()}
    assert modes["inputs.safetensors"] == modes["README.md"] and modes["run.sh"] & 0o111, modes


def test_a_run_folder_deleted_while_the_run_writes_it(runs: Path) -> None:
    import shutil

    from airctl.errors import LedgerError
    from airctl.ledger.writer import LedgerWriter

    before = latest_run(runs)
    writer = LedgerWriter.create(runs, "deleted", command="passes apply")
    shutil.rmtree(writer.root)
    with pytest.raises(LedgerError, match="deleted or moved") as caught:
        writer.finish()
    assert "free space" not in (caught.value.hint or "")
    assert latest_run(runs) == before, "latest never names a run that is gone"
    failing = LedgerWriter.create(runs, "deleted", command="passes apply")
    shutil.rmtree(failing.root)
    failing.finish("failed")  # a failing run's end writes best-effort: nothing raised over its own error
    assert latest_run(runs) == before


# -- import ------------------------------------------------------------------------------------------------
def test_import_stores_a_big_log_once_compressed(tmp_path: Path) -> None:
    from tests.conftest import ledger_text

    log = tmp_path / "debug.log"
    native = (REPO / "fixtures" / "checks" / "logs" / "wait_dropped_at_tail.log").read_text()
    with log.open("w") as f:
        f.write(native)
        for k in range(200_000):  # 20 MB of DEBUG lines after the listing
            f.write(f"[DEBUG] TORCHAIR(1,python):2026-01-01-00:00:00.000.000 [x.py:1]1 filler line {k:08d}\n")
    out = tmp_path / "runs"
    no_traceback(airctl("import", log, "--out", out, "--no-report"), 0)
    root = the_run(out)
    index = json.loads((root / "index.json").read_text())
    stored = [p for p in root.rglob("*") if p.is_file() and p.name != "index.json" and "graphs" not in p.parts]
    assert [p.relative_to(root).as_posix() for p in stored] == [index["log"]] and index["log"].endswith(".gz")
    assert stored[0].stat().st_size < log.stat().st_size / 5, "compressed"
    assert ledger_text(stored[0]) == log.read_text()


def test_binary_data_under_a_dump_name_is_not_imported(tmp_path: Path) -> None:
    folder = tmp_path / "from-npu"
    folder.mkdir()
    (folder / "dynamo_original_graph_1_rank_0_pid_1_ts_1.pbtxt").write_bytes(os.urandom(1 << 20) + b"\0")
    out = tmp_path / "runs"
    text = no_traceback(airctl("import", folder, "--out", out), 2)
    assert "1 files skipped" in text
    assert not out.exists() or not any(out.iterdir()), "nothing copied into a ledger"


def test_an_import_that_reads_no_stage_fails(tmp_path: Path) -> None:
    folder = tmp_path / "from-npu"
    folder.mkdir()
    (folder / "dynamo_original_graph_1_rank_0_pid_1_ts_1.pbtxt").write_text("this is not a graph {{{\n" * 1000)
    out = tmp_path / "runs"
    text = no_traceback(airctl("import", folder, "--out", out), 2)
    assert "nothing could be imported" in text
    root = the_run(out)
    assert json.loads((root / "index.json").read_text())["status"] == "failed"
    assert not list((root / "torchair").iterdir()), "the unreadable dump is not copied"


def test_dump_depth_must_be_positive(runs: Path) -> None:
    r = airctl("dump", the_run(runs), "--collapse", "module", "--depth", "-1")
    assert r.exit_code == 2 and "--depth" in r.output
