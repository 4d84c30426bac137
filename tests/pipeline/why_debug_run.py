"""Run scripts as a user on an NPU machine runs one to bring a log home for ``airctl import``:
TorchAir's and npugraph_ex's loggers at DEBUG (docs/import.md), ``TORCH_LOGS`` set by the caller.

    TORCH_LOGS=graph_breaks,recompiles python why_debug_run.py OUT_DIR SCRIPT.py...

Each script runs in a process of its own, forked after torch and TorchAir are imported (the costly
part, paid once): nothing has been compiled before the fork, so each starts as ``python SCRIPT.py``
would, and writes its stdout and stderr to ``OUT_DIR/<script stem>.log``.
"""

import logging
import os
import runpy
import sys
from pathlib import Path

import npugraph_ex  # noqa: F401 - its logger exists from here
import torchair  # noqa: F401

for name in ("torchair", "npugraph_ex"):
    logging.getLogger(name).setLevel(logging.DEBUG)
out = Path(sys.argv[1])
for script in sys.argv[2:]:
    pid = os.fork()
    if pid == 0:
        fd = os.open(out / f"{Path(script).stem}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        sys.argv = [script]
        code = 0
        try:
            runpy.run_path(script, run_name="__main__")
        except BaseException:  # noqa: BLE001 - the script's failure, in its log
            import traceback

            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit(f"{script} failed: see {out / Path(script).stem}.log")
