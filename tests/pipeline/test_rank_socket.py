"""The rank fork server's socket (issue 63, ranks): a launcher killed with SIGKILL left a
``$TMPDIR/airctl-ranks-*`` folder with a dead socket, one per kill. The socket is now abstract:
nothing in ``$TMPDIR`` to leave behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from airctl.pipeline.ranks import forks
from tests.conftest import REPO

LAUNCHER = '''
import sys
from pathlib import Path
from airctl.pipeline.ranks import forks
server, how = forks.start(Path(sys.argv[1]), "sim")
print(server.address if server else how, flush=True)
sys.stdin.read()
'''


def test_an_abstract_address_is_told_from_a_path() -> None:
    assert forks.unix_address("@airctl-ranks-1") == "\0airctl-ranks-1"
    assert forks.unix_address("/tmp/x/socket") == "/tmp/x/socket"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="abstract sockets are Linux's")
def test_a_killed_launcher_leaves_nothing_in_tmpdir(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(REPO), "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(tmp_path / "ledger")], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert launcher.stdout is not None
    address = launcher.stdout.readline().strip()
    assert address.startswith("@airctl-ranks-"), address
    listed = Path("/proc/net/unix").read_text()
    assert address in listed  # the server listens there
    launcher.send_signal(signal.SIGKILL)
    launcher.wait()
    deadline = time.monotonic() + 30
    while address in Path("/proc/net/unix").read_text():  # the server died with its launcher
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert list(tmp.iterdir()) == []
