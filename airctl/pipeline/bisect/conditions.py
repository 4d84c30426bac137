"""Is a run bad? The conditions ``airctl bisect`` searches with and ``airctl compile --fail-on`` checks.

A :class:`Condition` judges one compile (its :class:`~airctl.pipeline.compile.compiler.CompileResult` and
ledger) and returns a :class:`Verdict`: ``bad``, why, and ``unresolved`` when the run could not
show the condition at all (a compile that failed for another reason cannot show a race). Kinds:

==========  ==============================================================================
numerics    the compiled outputs differ from eager beyond ``atol`` (``execution``), or a YAML
            pass's eager check says it changed the results (the compile stops there)
race        the multi-stream executor reported a stream race (``execution.races``)
check       ``airctl check`` of the ledger finds an error (the verifier on each ``fx-final``)
compile     the compile failed (``status`` ``failed``)
expr        ``--bad-if EXPR`` is true on ``index.json`` (:mod:`airctl.ledger.expr`, no ``eval``)
cmd         ``--bad-cmd CMD`` exits non-zero: run by the shell, as the user typed it, with
            ``{ledger}`` replaced by the ledger folder and ``AIRCTL_LEDGER`` set to it, in its
            own process group, for at most ``--cmd-timeout`` seconds (:mod:`airctl.external`:
            the whole group is killed then; a step whose command timed out is unresolved)
==========  ==============================================================================
"""

from __future__ import annotations

import math
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.execute.compare import DEFAULT_ATOL
from airctl.external import run_command
from airctl.modes import Bad

CMD_TIMEOUT_S = 600.0


@dataclass
class Verdict:
    bad: bool
    why: str
    unresolved: bool = False  # the run could not show the condition (it failed otherwise)

    def to_json(self) -> dict[str, Any]:
        return {"bad": self.bad, "why": self.why, "unresolved": self.unresolved}


@dataclass
class Condition:
    kind: str  # a Bad value, "expr" or "cmd"
    expr: str | None = None
    cmd: str | None = None
    atol: float = DEFAULT_ATOL
    cmd_timeout_s: float = CMD_TIMEOUT_S

    @classmethod
    def make(cls, bad: str | None = None, bad_if: str | None = None, bad_cmd: str | None = None,
             atol: float = DEFAULT_ATOL, cmd_timeout_s: float = CMD_TIMEOUT_S) -> Condition:
        if not (isinstance(cmd_timeout_s, int | float) and math.isfinite(cmd_timeout_s) and cmd_timeout_s > 0):
            raise AirctlError(f"--cmd-timeout must be a positive number of seconds, not {cmd_timeout_s!r}",
                              hint=f"the default is {CMD_TIMEOUT_S:g} s per step")
        if isinstance(atol, bool) or not isinstance(atol, int | float) or not math.isfinite(atol) or atol < 0:
            raise AirctlError(f"--atol must be a finite number >= 0, not {atol!r}",
                              hint=f"the default is {DEFAULT_ATOL:g}")
        given = [x for x in (bad, bad_if, bad_cmd) if x]
        if len(given) > 1:
            raise AirctlError("give one of --bad, --bad-if and --bad-cmd",
                              hint="--bad numerics|race|check|compile, --bad-if EXPR on index.json, or --bad-cmd CMD")
        if bad_if:
            from airctl.ledger.expr import check

            check(bad_if)
            return cls("expr", expr=bad_if, atol=atol)
        if bad_cmd:
            return cls("cmd", cmd=bad_cmd, atol=atol, cmd_timeout_s=float(cmd_timeout_s))
        return cls(Bad(bad or Bad.NUMERICS).value, atol=atol)

    def describe(self) -> str:
        return {"numerics": f"outputs differ from eager (atol {self.atol:g})", "race": "a stream race is reported",
                "check": "the verifier finds an error", "compile": "the compile fails",
                "expr": f"--bad-if {self.expr}",
                "cmd": f"--bad-cmd {self.cmd} (at most {self.cmd_timeout_s:g} s a step)"}[self.kind]

    def judge(self, result: Any) -> Verdict:
        """``result``: a :class:`~airctl.pipeline.compile.compiler.CompileResult`."""
        index = result.index
        failed = index.status == "failed"
        error = (index.error or "").splitlines()[0] if index.error else ""
        if self.kind == Bad.COMPILE:
            return Verdict(failed, f"the compile failed: {error}" if failed else f"compiled (status {index.status})")
        if self.kind == "expr":
            from airctl.ledger.expr import evaluate

            value = evaluate(str(self.expr), index.to_json())
            return Verdict(bool(value), f"--bad-if gives {value!r}")
        if self.kind == "cmd":
            return _run_cmd(str(self.cmd), Path(result.ledger_dir), self.cmd_timeout_s)
        if self.kind == Bad.NUMERICS:
            return _numerics(index, failed, error)
        if failed:
            return Verdict(False, f"the compile failed before running: {error}", unresolved=True)
        if self.kind == Bad.RACE:
            races = (index.execution or {}).get("races") or []
            return Verdict(bool(races), races[0]["message"] if races else "no stream race")
        from airctl.pipeline.check import check_source

        findings = [f for f in check_source(result.ledger_dir, mode=index.run_mode).findings if f.severity == "error"]
        if findings:
            f = findings[0]
            return Verdict(True, f"{len(findings)} error finding(s); first: {f.rule}: {f.message}")
        return Verdict(False, "no error finding")


def _numerics(index: Any, failed: bool, error: str) -> Verdict:
    for stage in index.stages():
        check = stage.entry.eager_check or {}
        if check.get("matches") is False:
            return Verdict(True, f"{stage.name} changes the results (its eager check): "
                                 + "; ".join(check.get("mismatches") or [])[:200])
    execution = index.execution
    if execution is None:
        return Verdict(False, f"did not run: {error}" if failed else "did not run", unresolved=True)
    if execution.get("matches_eager") is False:
        return Verdict(True, "outputs differ from eager: " + "; ".join(execution.get("mismatches") or [])[:200])
    return Verdict(False, f"outputs match eager (max abs error {execution.get('max_abs_error')})")


def _run_cmd(cmd: str, ledger: Path, timeout_s: float) -> Verdict:
    text = cmd.replace("{ledger}", shlex.quote(str(ledger)))
    env = {**os.environ, "AIRCTL_LEDGER": str(ledger)}
    done = run_command(text, shell=True, env=env, timeout_s=timeout_s)
    if done.timed_out:
        return Verdict(False, f"--bad-cmd ran past --cmd-timeout {timeout_s:g} s (its process group was killed)",
                       unresolved=True)
    said = f": {done.last_line[:160]}" if done.last_line else ""
    return Verdict(done.returncode != 0, f"--bad-cmd exited {done.returncode}{said}")
