"""What the warm process imports ahead for its commands (airctl.sim.preload) is imported as a run
imports it. A module a run imports inside its sim session binds what the session put in place; one
imported ahead, outside any run, would bind the original of anything the session replaces (a
``from torch import zeros`` before the device word maps ``npu``) and call it in every later run.
So no module imported ahead may hold an object that a session replaces. The ledgers themselves are
compared warm against cold in tests/cli/test_warm.py."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

SCRIPT = r"""
import json, sys, types
from airctl.sim import preload
from airctl.hooks.patching import Patches
from airctl.sim.session import SimContext, load_torchair, session

load_torchair()
before = set(sys.modules)
preload.first_use()
import torch
control = sys.modules["airctl_control"] = types.ModuleType("airctl_control")
control.zeros = torch.zeros  # what the test must find: a factory the device word replaces, bound ahead
ahead = sorted(set(sys.modules) - before)
replaced = {}  # id(original) -> what a session replaces it with
setattr_, setitem_ = Patches.setattr, Patches.setitem

def record(owner, name, old):
    if old is not None and not isinstance(old, (bool, int, float, str, types.ModuleType)):
        replaced[id(old)] = f"{getattr(owner, '__name__', type(owner).__name__)}.{name}"

def recording_setattr(self, owner, name, value):
    old = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    record(owner, name, old)
    return setattr_(self, owner, name, value)

def recording_setitem(self, mapping, key, *value):
    record(mapping, str(key), mapping.get(key))
    return setitem_(self, mapping, key, *value)

Patches.setattr, Patches.setitem = recording_setattr, recording_setitem
with session(SimContext(run_ge=lambda gm, args, name: None)):
    pass
bound = [f"{m}.{k} is {replaced[id(v)]}" for m in ahead for k, v in list(vars(sys.modules[m]).items())
         if id(v) in replaced]
print(json.dumps({"ahead": len(ahead), "bound": bound}))
"""


def test_no_module_imported_ahead_binds_what_a_session_replaces() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.splitlines()[-1])
    assert found["ahead"] > 100  # it did import ahead (TorchAir's aclgraph converter, npugraph_ex, ...)
    assert found["bound"] == ["airctl_control.zeros is torch.zeros"]  # only the control
