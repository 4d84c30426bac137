"""Ctrl-C in the first moments of a command (issue 63.7): 130 and one line, never a traceback.

Until ``run()`` armed airctl's handlers (after importing them: tens of milliseconds), Python's
default handler turned a Ctrl-C into a ``KeyboardInterrupt`` traceback and death by SIGINT (-2;
3 of 12 tries in the first ~0.2 s). Here the signal is sent exactly then: from inside the first
import ``run()`` makes, in a fresh process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EARLY = '''
import builtins, os, signal, sys
signum = int(sys.argv[1])
real = builtins.__import__
def imp(name, *args, **kwargs):
    if name.startswith("airctl.pipeline"):  # run() importing airctl's signal handling, not yet armed
        os.kill(os.getpid(), signum)
    return real(name, *args, **kwargs)
from airctl.cli import main
builtins.__import__ = imp
sys.argv = ["airctl", "--version"]
main.console()
'''


@pytest.mark.parametrize("signum, code, said", [(signal.SIGINT, 130, "error: interrupted"),
                                                (signal.SIGTERM, 143, "error: terminated by SIGTERM")])
def test_a_signal_before_the_handlers_are_armed_exits_as_later(signum: int, code: int, said: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "AIRCTL_WARM": "0"}
    done = subprocess.run([sys.executable, "-c", EARLY, str(int(signum))], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == code, done.stderr
    assert done.stderr.strip() == said
    assert "Traceback" not in done.stderr


def test_an_ignored_interrupt_stays_ignored() -> None:
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); from airctl.cli import main; "
            "main._early_signals(); sys.exit(signal.getsignal(signal.SIGINT) is not signal.SIG_IGN)")
    assert subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=60).returncode == 0
