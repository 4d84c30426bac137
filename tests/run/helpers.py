"""Run ``python -m airctl run ...`` in a process of its own (scripts set process-global GE options and
TorchAir's log level, which must not leak into other tests): forked from the suite's warm process, which
imported torch and TorchAir once (tests/warm_process.py), or a fresh interpreter without one."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.warm_process import WarmProcess, start

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


def airctl_run(cwd: Path, *args: str | Path, timeout: int = 300, env_extra: dict[str, str] | None = None,
               warm: WarmProcess | None = None) -> Run:
    env = dict(os.environ, **(env_extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    logs = cwd.parent / f"{cwd.name}-stdio"
    logs.mkdir(exist_ok=True)
    child = start(warm, ["run", "--backend", "sim", *map(str, args)], cwd, env, logs)
    return Run(child.wait(timeout), child.stdout, child.stderr, cwd)
