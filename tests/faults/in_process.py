"""airctl run in-process for the fault tests, and what every one of them checks of its output.

A damaged ledger, a hostile name or a bad setting must end in an error message and an exit code,
never in a traceback or exit 70 (``internal error``): :func:`no_traceback` is that check, for all
of tests/faults. Ledgers to damage come from ``airctl import`` of :data:`DUMP` (a second, no
TorchAir compile).
"""

from __future__ import annotations

from typer.testing import CliRunner, Result

from airctl.cli.app import build_app
from tests.conftest import REPO

runner = CliRunner()
DUMP = REPO / "fixtures" / "checks" / "dumps" / "similar_stream_labels.txt"


def airctl(*args: object, env: dict[str, str] | None = None) -> Result:
    """``airctl ARGS`` in this process (``env``: variables set for the command only)."""
    return runner.invoke(build_app(), [str(a) for a in args], env=env)


def no_traceback(result: Result, *codes: int) -> str:
    """The command's stdout + stderr, after checking it exited with one of ``codes`` and showed no
    traceback and no internal error."""
    text = result.stdout + result.stderr
    assert result.exit_code in codes, (result.exit_code, text[-2000:], result.exception)
    assert "internal error" not in text and "Traceback" not in text, text[-2000:]
    return text
