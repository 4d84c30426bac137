"""A signal at the very end of a command (issue 62.20): 130, never an exit 0 or death by SIGINT (-2).

Once the console script holds the signals for its end (:func:`airctl.pipeline.run.signals.hold`),
a signal the kernel hands another thread is handled by Python only when the main thread next runs
a bytecode; in the last stretch before ``os._exit`` it can be tripped but never handled: neither
recorded nor pending. The C-level handler's wakeup pipe has it whatever the main thread does (the
first test clears the Python-level record after the signal came, as if its handler had not run yet).
The others put a real SIGINT between two steps of the console script, cold and as a warm client.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


# The console script with a command that ends at once; ``{where}`` sends a real SIGINT exactly at one
# step of run(), from a C call, so airctl's armed handler raises it at the next bytecode.
AT_A_STEP = '''
import signal, sys, threading
import airctl.cli.app as app
from airctl.cli import main
from airctl.pipeline.run import boundary, signals

def command(argv):
    raise SystemExit(0)

def landing(real):
    sent = []
    def step(*args, **kwargs):
        if not sent:  # one Ctrl-C, at the first call
            sent.append(1)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        return real(*args, **kwargs)
    return step

app.run_app = command
{where} = landing({where})
sys.argv = ["airctl", "runs"]
main.console()
'''


@pytest.mark.parametrize("where", ["signals.hold", "boundary.running_threads"],
                         ids=["as-the-end-holds-the-signals", "between-arming-and-the-command"])
def test_an_interrupt_between_two_steps_of_the_console_script_ends_130(tmp_path: Path, where: str) -> None:
    """A Ctrl-C whose handler runs at the first bytecode of the end's hold (after the command's
    objects were freed: seconds of C code at the end of a compile, where a signal waits for the next
    bytecode), or between arming the handlers and starting the command, met no ``except``: Python's
    traceback, a second of teardown, then death by SIGINT (-2; issue 62.20's sweep: 1 of 76)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "AIRCTL_WARM": "0"}
    done = subprocess.run([sys.executable, "-c", AT_A_STEP.format(where=where)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, (done.returncode, done.stderr[-2000:])
    assert done.stderr.strip() == "error: interrupted", done.stderr[-2000:]


# The console script handing its command to a warm process (a stand-in server here: it answers with a
# sleeping child's pid, then that the command exited 0); a Ctrl-C lands right after the client has
# seen the command end, before the process exits.
SERVED = '''
import json, os, signal, socket, subprocess, sys, threading
from airctl.cli import main, warm
from airctl.pipeline.warm import client

command = subprocess.Popen(["sleep", "60"], start_new_session=True, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
SOCK = sys.argv[1]
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(SOCK)
listener.listen(1)

def serve():
    conn, _ = listener.accept()
    _, fds, _, _ = socket.recv_fds(conn, 4, 3)
    for fd in fds:
        os.close(fd)
    conn.recv(1 << 20)
    conn.sendall(json.dumps({"pid": command.pid}).encode() + b"\\n")
    conn.sendall(json.dumps({"exit": 0}).encode() + b"\\n")
    conn.close()

threading.Thread(target=serve, daemon=True).start()

def served(argv, ending=None):
    code = client.relay(SOCK, argv, ending=ending) if ending is not None else client.relay(SOCK, argv)
    assert code == 0, code
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # the command ended 0; then Ctrl-C
    command.kill()
    return code

warm.served = served
sys.argv = ["airctl", "compile", "model.py"]
main.console()
'''


def test_an_interrupt_to_a_warm_client_after_its_command_ended_exits_130(tmp_path: Path) -> None:
    """The client's forwarding handler stayed in place once its command had ended: the Ctrl-C went to a
    process that was gone, and the client exited with the command's 0."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("AIRCTL_WARM", None)
    done = subprocess.run([sys.executable, "-c", SERVED, str(tmp_path / "warm.sock")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, (done.returncode, done.stderr[-2000:])
    assert done.stderr.strip() == "error: interrupted", done.stderr[-2000:]
