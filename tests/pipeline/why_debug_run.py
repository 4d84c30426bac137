"""Run a script as a user on an NPU machine runs it to bring a log home for ``airctl import``:
TorchAir's and npugraph_ex's loggers at DEBUG (docs/import.md), ``TORCH_LOGS`` set by the caller.

    TORCH_LOGS=graph_breaks,recompiles python why_debug_run.py SCRIPT.py ARGS... > debug.log 2>&1
"""

import logging
import runpy
import sys

import npugraph_ex  # noqa: F401 - its logger exists from here
import torchair  # noqa: F401

for name in ("torchair", "npugraph_ex"):
    logging.getLogger(name).setLevel(logging.DEBUG)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
