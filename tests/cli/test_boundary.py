"""The CLI's one error boundary (airctl/cli/app.py): what a raised error looks like to the user, and its exit
code, the same through typer's CliRunner (the tests' way in) and the shell (``python -m airctl``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.errors import AirctlError, CompileError, ExitCode, FindingsExit, Terminated

REPO = Path(__file__).resolve().parents[2]
BAD_CSV = REPO / "fixtures" / "profiles" / "bad_kernels_csv"
CLEAN = REPO / "fixtures" / "checks" / "ok" / "two_stream_plan.json"
runner = CliRunner()


def invoke(*args: object, env: dict[str, str] | None = None):  # noqa: ANN201
    return runner.invoke(build_app(), [str(a) for a in args], env=env)


def shell(*args: object, code: str | None = None) -> subprocess.CompletedProcess:
    """``python -m airctl ARGS`` (or ``python -c CODE ARGS``) in a fresh process, on this checkout."""
    env = dict(os.environ, PYTHONPATH=str(REPO), AIRCTL_TRACEBACK="")
    argv = ["-c", code, *map(str, args)] if code else ["-m", "airctl", *map(str, args)]
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)


def raising(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """Make `airctl check` raise ``error`` from its library call."""
    from airctl.pipeline import check

    def boom(*_args: object, **_kwargs: object) -> None:
        raise error

    monkeypatch.setattr(check, "check_source", boom)


# -- AirctlError: file:line: error: message, hint:, its exit code -----------------------------------
def test_airctl_error_through_cli_runner(tmp_path: Path) -> None:
    r = invoke("profile", "analyze", BAD_CSV, "--out", tmp_path)
    assert r.exit_code == ExitCode.USAGE
    lines = r.stderr.splitlines()
    assert lines[0].endswith("kernel_details.csv:1: error: kernel_details.csv lacks the column(s) Duration(us); "
                             "it has: Step Id, Model ID, Task ID, Stream ID, Name, Type, Accelerator Core, "
                             "Start Time(us), Wait Time(us), Block Dim")
    assert lines[1].startswith("hint: expected torch_npu's kernel_details.csv")
    assert r.stdout == ""


@pytest.mark.slow
def test_airctl_error_through_the_shell_is_the_same(tmp_path: Path) -> None:
    via_runner = invoke("profile", "analyze", BAD_CSV, "--out", tmp_path)
    proc = shell("profile", "analyze", BAD_CSV, "--out", tmp_path)
    assert proc.returncode == via_runner.exit_code == 2
    assert proc.stderr == via_runner.stderr and proc.stdout == ""
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("error, code", [
    (AirctlError("bad spec", file="p.yaml", line=3, column=5, hint="fix it"), 2),
    (CompileError("TorchAir failed", file="m.py", line=9, node="amax"), 3),
])
def test_each_error_class_keeps_its_exit_code(monkeypatch: pytest.MonkeyPatch, error: AirctlError,
                                              code: int) -> None:
    raising(monkeypatch, error)
    r = invoke("check", CLEAN)
    assert r.exit_code == code
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{error.location}: error: {error.message}")
    assert ("hint: fix it" in r.stderr) == bool(error.hint)
    if error.node:
        assert f"(node {error.node})" in first


def test_findings_exit_1_without_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    raising(monkeypatch, FindingsExit(2))
    r = invoke("check", CLEAN)
    assert r.exit_code == ExitCode.FINDINGS and r.stderr == ""


# -- interrupts and bugs -------------------------------------------------------------------------------
def test_keyboard_interrupt_is_130_and_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    raising(monkeypatch, KeyboardInterrupt())
    r = invoke("check", CLEAN)
    assert r.exit_code == 130
    assert r.stderr == "error: interrupted\n"


def _wrapped_by_set_name(stop: KeyboardInterrupt) -> BaseException:
    """What Python 3.11 makes of a signal that lands in a descriptor's ``__set_name__`` while a module
    defines a class (a dataclass field): the interrupt as the ``__cause__`` of a ``RuntimeError``."""
    class Field:
        def __set_name__(self, owner: type, name: str) -> None:
            raise stop

    try:
        type("Timeline", (), {"events": Field()})
    except BaseException as e:  # noqa: BLE001 - whatever Python made of it
        return e
    raise AssertionError("__set_name__ did not raise")


@pytest.mark.parametrize("stop, code, text", [
    (KeyboardInterrupt(), 130, "error: interrupted\n"),
    (Terminated(1, "SIGHUP"), 129, "error: terminated by SIGHUP\n"),
], ids=["SIGINT", "SIGHUP"])
def test_an_interrupt_that_python_wrapped_is_still_an_interrupt(monkeypatch: pytest.MonkeyPatch,
                                                                stop: KeyboardInterrupt, code: int, text: str) -> None:
    wrapped = _wrapped_by_set_name(stop)
    if sys.version_info < (3, 12):  # 3.12 raises it as it is, with a note
        assert type(wrapped) is RuntimeError and wrapped.__cause__ is stop
    raising(monkeypatch, wrapped)
    r = invoke("check", CLEAN)
    assert (r.exit_code, r.stderr) == (code, text)


def test_unexpected_exception_is_70_and_one_line_without_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    raising(monkeypatch, ValueError("bad state\nsecond line"))
    r = invoke("check", CLEAN, env={"AIRCTL_TRACEBACK": ""})
    assert r.exit_code == ExitCode.INTERNAL == 70
    assert r.stderr.splitlines() == [
        "error: internal error: ValueError: bad state; rerun with --traceback (or AIRCTL_TRACEBACK=1) to see where"]
    assert not isinstance(r.exception, ValueError), "the boundary handled it"


@pytest.mark.parametrize("how", ["option", "env"])
def test_traceback_on_request(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    raising(monkeypatch, ValueError("bad state"))
    r = invoke("--traceback", "check", CLEAN) if how == "option" else invoke("check", CLEAN,
                                                                             env={"AIRCTL_TRACEBACK": "1"})
    assert r.exit_code == 70
    assert r.stderr.startswith("Traceback (most recent call last):")
    assert "in boom" in r.stderr and "ValueError: bad state" in r.stderr
    assert r.stderr.rstrip().endswith("error: internal error: ValueError: bad state")


PATCHED = """
import sys
from airctl.cli.main import run
from airctl.pipeline import check

def boom(*args, **kwargs):
    raise {error}

check.check_source = boom
run(sys.argv[1:])
"""


@pytest.mark.parametrize("error, code, text", [
    ("KeyboardInterrupt()", 130, "error: interrupted\n"),
    ("RuntimeError('oops')", 70, "error: internal error: RuntimeError: oops; rerun with --traceback "
                                 "(or AIRCTL_TRACEBACK=1) to see where\n"),
])
def test_interrupt_and_bug_through_the_console_entry(error: str, code: int, text: str) -> None:
    proc = shell("check", CLEAN, code=PATCHED.format(error=error))
    assert proc.returncode == code
    assert proc.stderr == text and proc.stdout == ""


BEFORE_THE_BOUNDARY = """
import sys
from airctl.cli import app
from airctl.cli.main import run
from airctl.errors import Terminated

def build_app():  # a command module's import, where SIGHUP met a dataclass field's __set_name__
    raise RuntimeError("Error calling __set_name__ on 'Field' instance") from Terminated(1, "SIGHUP")

app.build_app = build_app
run(sys.argv[1:])
"""


def test_a_wrapped_interrupt_while_the_commands_import_exits_with_its_code() -> None:
    proc = shell("check", CLEAN, code=BEFORE_THE_BOUNDARY)
    assert (proc.returncode, proc.stderr, proc.stdout) == (129, "error: terminated by SIGHUP\n", "")


@pytest.mark.slow
def test_usage_errors_keep_code_2_and_unknown_commands_too() -> None:
    r = invoke("compile")
    assert r.exit_code == 2 and "Usage: airctl compile" in r.output  # no argument at all: the help
    r = invoke("compile", "--mode", "max-autotune")
    assert r.exit_code == 2 and "Missing argument" in r.output
    proc = shell("chekc")
    assert proc.returncode == 2 and "No such command" in proc.stderr


def test_unwritable_output_is_a_usage_error_naming_the_path(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("")
    r = invoke("dump", CLEAN, "--type", "json", "-o", target / "g.json")  # a file where a folder is expected
    assert r.exit_code == 2
    assert f"{target / 'g.json'}: error:" in r.stderr and "hint: check that the folder exists" in r.stderr
