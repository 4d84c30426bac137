"""A signal at the very end of a cold command (issue 62.20): never an exit 0.

Once the console script holds the signals for its end (:func:`airctl.pipeline.run.signals.hold`),
a signal the kernel hands another thread is handled by Python only when the main thread next runs
a bytecode; in the last stretch before ``os._exit`` it can be tripped but never handled: neither
recorded nor pending. The C-level handler's wakeup pipe has it whatever the main thread does. Here
the Python-level record is cleared after the signal came, as if its handler had not run yet.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODE = '''
import signal, threading, time
from airctl.pipeline.run import signals
signals.arm()
go = threading.Event()
other = threading.Thread(target=lambda: go.wait() and signal.pthread_kill(threading.get_ident(), signal.SIGINT))
other.start()  # before hold(): its signal mask is the process's, as torch's threads have it
assert signals.hold() is None
go.set()
other.join()
time.sleep(0.05)
signals._LATE.clear()  # as if the main thread had not run the handler yet
found = signals.held()
print(type(found).__name__)
'''


def test_a_signal_tripped_in_another_thread_at_the_end_is_found() -> None:
    done = subprocess.run([sys.executable, "-c", CODE], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "KeyboardInterrupt"
