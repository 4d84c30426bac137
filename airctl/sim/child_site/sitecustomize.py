"""Start-up hook of Python processes started under a sim session (see :mod:`airctl.sim.child`).

Python imports ``sitecustomize`` from the first folder of ``sys.path`` that has one; airctl puts
this folder first on a child's ``PYTHONPATH``. It installs sim's import hook and then runs the
``sitecustomize`` it shadows, if there is one, so the environment's own start-up still happens.
"""

from __future__ import annotations

import importlib.util
import os
import sys


def _shadowed() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.getcwd())
        candidate = os.path.join(folder, "sitecustomize.py")
        if folder != here and os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_airctl_shadowed_sitecustomize", candidate)
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


try:
    from airctl.sim.child import install

    install()
except ImportError:  # airctl is gone from the path: the child runs as plain Python
    pass
_shadowed()
