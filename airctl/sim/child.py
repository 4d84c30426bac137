"""Sim for the child Python processes a script starts (``sys.executable -c ...``, ``multiprocessing``).

A script under ``airctl run --backend sim`` may start Python processes of its own: TorchAir's tests
run ``subprocess.run([sys.executable, "-c", ...])`` and ``torch.multiprocessing.spawn``. Those
processes start from scratch: without this, ``import torch_npu`` there finds the real wheel (which
needs CANN) and ``import torchair`` TorchAir without its C++ extension.

While a sim session is open (:meth:`airctl.backends.sim.SimBackend.session`), :func:`child_env`
says, through the environment every child inherits, where airctl is and that it runs under sim
(:data:`ENV`), and puts :mod:`airctl.sim.child_site` first on ``PYTHONPATH``; its
``sitecustomize`` calls :func:`install` at the child's start-up (and then runs any
``sitecustomize`` it shadows). :func:`install` costs nothing up front: it adds an import hook, and
only when the child first imports ``torch_npu``, ``torchair`` or ``npugraph_ex`` does it open a
sim session for the rest of the child's life, with its own multi-stream executors
(:class:`airctl.execute.executors.Executors`) and no ledger: a child's graphs run, but only the
parent's run is recorded. A torchrun rank is not such a child: it runs airctl's own rank worker
(docs/multi-rank.md), and the hook leaves airctl's own processes alone.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from airctl.torch_env import restored_environ

ENV = "AIRCTL_SIM_CHILD"
SITE_DIR = Path(__file__).resolve().parent / "child_site"
ROOT = Path(__file__).resolve().parent.parent.parent  # the folder holding the airctl package
TRIGGERS = ("torch_npu", "torchair", "npugraph_ex")


@contextlib.contextmanager
def child_env() -> Iterator[None]:
    """For the length of the block, Python processes started from here open a sim session when
    they import a trigger module; the variables are put back afterwards."""
    with restored_environ(ENV, "PYTHONPATH") as saved:
        paths = [str(SITE_DIR), str(ROOT)] + [p for p in (saved["PYTHONPATH"] or "").split(os.pathsep) if p]
        os.environ[ENV] = "1"
        os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        yield


class _Existing(importlib.abc.Loader):
    """Hands out the module a just-opened session put in ``sys.modules``, unchanged.

    Python answers a finder's spec with the ``__spec__`` of a module that appeared in ``sys.modules``
    meanwhile, and would then load that module a second time; so the module's own spec is set
    aside while the import machinery uses this loader's, and put back when it "executes"."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.spec = getattr(module, "__spec__", None)
        module.__spec__ = None

    def create_module(self, spec: Any) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec


class _SimOnImport(importlib.abc.MetaPathFinder):
    """Opens the child's sim session when a trigger module is first imported."""

    def __init__(self) -> None:
        self.opening = False
        self.stack: contextlib.ExitStack | None = None

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if self.opening or name.partition(".")[0] not in TRIGGERS or _airctl_itself():
            return None
        if self.stack is None:
            self.opening = True
            try:
                self.stack = open_session()
            finally:
                self.opening = False
            sys.meta_path[:] = [f for f in sys.meta_path if f is not self]  # one session per child
        module = sys.modules.get(name)
        return None if module is None else importlib.machinery.ModuleSpec(name, _Existing(module))


def _airctl_itself() -> bool:
    """Whether this process is airctl's own (its CLI, a torchrun rank's worker): those open their
    own sessions, with ledgers; the hook stays out of their way."""
    return "airctl.cli" in sys.modules or "airctl.pipeline" in sys.modules


def open_session() -> contextlib.ExitStack:
    """A sim session for the rest of this process, closed at exit."""
    from airctl.execute.executors import Executors
    from airctl.sim.session import SimContext, session

    executors = Executors()
    stack = contextlib.ExitStack()
    stack.callback(executors.close)
    stack.enter_context(session(SimContext(run_ge=executors.run_ge, run_acl=executors.run_acl,
                                           run_npugraph_ex=executors.run_npugraph_ex)))
    atexit.register(stack.close)
    return stack


def install() -> bool:
    """Called by ``sitecustomize`` at start-up: the import hook, when :data:`ENV` says so."""
    if os.environ.get(ENV) != "1" or any(isinstance(f, _SimOnImport) for f in sys.meta_path):
        return False
    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")  # torch must not load the real torch_npu
    sys.meta_path.insert(0, _SimOnImport())
    return True
