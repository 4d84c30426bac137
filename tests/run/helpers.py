"""Run ``python -m airctl run ...`` in a subprocess (scripts set process-global GE options and
TorchAir's log level, which must not leak into other tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "fixtures" / "scripts"
EXAMPLE = REPO.parent / "shared" / "examples" / "custom_pass_multistream.py"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    cwd: Path

    @property
    def ledger(self) -> Path:
        ledgers = [p for p in (self.cwd / "airctl-runs").iterdir() if (p / "index.json").is_file()]
        assert len(ledgers) == 1, ledgers
        return ledgers[0]

    @property
    def index(self) -> dict[str, Any]:
        return json.loads((self.ledger / "index.json").read_text())


def airctl_run(cwd: Path, *args: str | Path, timeout: int = 300, env_extra: dict[str, str] | None = None) -> Run:
    env = dict(os.environ, **(env_extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "airctl", "run", "--backend", "sim", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=timeout)
    return Run(proc.returncode, proc.stdout, proc.stderr, cwd)
