#!/usr/bin/env python3
"""Run TorchAir's own system tests (``tests/st`` of an Ascend/torchair checkout) under ``airctl run``.

TorchAir's CI runs each ``tests/st`` module with ``python -m unittest <module>`` from a build folder
that holds the test files and a compiled fake-device module ``_privateuse1_backend``
(``tests/st/CMakeLists.txt``). This script does the same against sim, without modifying a test:

1. copies the checkout's ``tests/st`` into a temporary folder (the tests write files beside them);
2. puts airctl's Python stand-in for ``_privateuse1_backend`` (``airctl/sim/conformance/``) on
   ``PYTHONPATH``, and the tests' op registry (``airctl/sim/conformance/ascend_ir.yaml``) beside the
   copies, where sim reads a model's Ascend IR declarations;
3. runs each module named by the CMakeLists' ``-m unittest`` lines as
   ``airctl run --backend sim FILE.py -v`` (the file runs as ``__main__`` and ends in
   ``unittest.main()``), in its own process, under a timeout;
4. reads unittest's verbose report: how many ran, failed, errored, were skipped, and the name and
   the exception line of every failing test.

It prints a table per file and the total (``--json`` for the whole result). See docs/conformance.md.

    .venv/bin/python scripts/conformance.py /tmp/ta --files torchair_scope_st torchair_hcom_st
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STANDIN_DIR = REPO / "airctl" / "sim" / "conformance"
MAX_OUTPUT = 64 * 1024 * 1024  # bytes of a file's output kept for parsing
HEADER = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\S+) \(([^)]*)\)")
VERBOSE = re.compile(r"^(test\w*) \(([\w.]+)\)")
RAN = re.compile(r"^Ran (\d+) tests? in ")
SUMMARY = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$")
EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Failure|Interrupt|Exit|Warning)|AssertionError)\b")


@dataclass
class Failure:
    test: str  # Class.test_name
    kind: str  # FAIL, ERROR or UNEXPECTED SUCCESS
    reason: str  # the exception line of its traceback (first line of the message)


@dataclass
class FileResult:
    module: str
    defined: int  # test methods in the file (read from its source, so a file that dies early still counts)
    status: str = "ran"  # ran, crashed (no unittest summary), timeout, missing
    ran: int = 0
    passed: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    expected_failures: int = 0
    unexpected_successes: int = 0
    seconds: float = 0.0
    exit_code: int | None = None
    failed: list[Failure] = field(default_factory=list)
    tail: str = ""  # the last lines of output when the file did not report a summary


def modules_from_cmake(st_dir: Path) -> list[str]:
    """The modules TorchAir's CI runs, in its order (``-m unittest NAME`` in tests/st/CMakeLists.txt)."""
    text = (st_dir / "CMakeLists.txt").read_text(encoding="utf-8", errors="replace")
    names = re.findall(r"-m unittest (\w+)", text)
    return list(dict.fromkeys(names))


def count_tests(path: Path) -> int:
    """Methods named ``test*`` of classes in a test file (what unittest's loader would collect)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError):
        return 0
    return sum(1 for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)
               for fn in cls.body if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
               and fn.name.startswith("test"))


def _reason(block: list[str]) -> str:
    """The exception line of a traceback block: the last line naming an exception, else its last line."""
    lines = [ln.rstrip() for ln in block if ln.strip()]
    for i in range(len(lines) - 1, -1, -1):
        if EXC_LINE.match(lines[i]) and not lines[i].startswith(" "):
            return lines[i][:300]
    return lines[-1][:300] if lines else ""


def parse_unittest(text: str, result: FileResult) -> None:
    """Fill ``result`` from unittest's verbose report in ``text`` (stderr and stdout together)."""
    lines = text.splitlines()
    ran_at = None
    for i, line in enumerate(lines):
        m = RAN.match(line)
        if m:
            ran_at = i
            result.ran = int(m.group(1))
    if ran_at is None:
        result.status = "crashed"
        result.tail = "\n".join(lines[-15:])
        return
    for line in lines[ran_at + 1:]:
        m = SUMMARY.match(line.strip())
        if m:
            for part in (m.group(2) or "").split(","):
                key, _, value = part.strip().partition("=")
                if value.isdigit():
                    attr = {"failures": "failures", "errors": "errors", "skipped": "skipped",
                            "expected failures": "expected_failures",
                            "unexpected successes": "unexpected_successes"}.get(key)
                    if attr:
                        setattr(result, attr, int(value))
            break
    i = 0
    while i < ran_at:
        m = HEADER.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < ran_at and not lines[j].startswith("=" * 20) and not (
                lines[j].startswith("-" * 20) and j + 1 < len(lines) and RAN.match(lines[j + 1])):
            j += 1
        block = [ln for ln in lines[i + 1:j] if not ln.startswith("-" * 20)]
        test_id = m.group(3).split(".")
        name = ".".join(test_id[-2:]) if len(test_id) >= 2 else m.group(2)
        result.failed.append(Failure(name, m.group(1), _reason(block)))
        i = j
    result.passed = max(0, result.ran - result.failures - result.errors - result.skipped
                        - result.expected_failures - result.unexpected_successes)


def run_file(module: str, work: Path, airctl: list[str], out: Path, timeout: float, check: bool) -> FileResult:
    path = work / f"{module}.py"
    result = FileResult(module, count_tests(path))
    if not path.is_file():
        result.status = "missing"
        return result
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(STANDIN_DIR), str(work), str(REPO),
                                                     env.get("PYTHONPATH", "")) if p)
    env.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    cmd = [*airctl, "run", "--backend", "sim", "--out", str(out / module),
           "--check" if check else "--no-check", path.name, "-v"]
    log = work / f"{module}.log"
    started = time.monotonic()
    with open(log, "wb") as sink:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            result.exit_code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the file's own process group (start_new_session)
            proc.wait()
            result.status = "timeout"
    result.seconds = round(time.monotonic() - started, 1)
    with open(log, "rb") as f:
        text = f.read(MAX_OUTPUT).decode("utf-8", errors="replace")
    if result.status != "timeout":
        parse_unittest(text, result)
    else:
        result.tail = "\n".join(text.splitlines()[-15:])
    return result


def table(results: list[FileResult]) -> str:
    rows = [f"{'file':<42} {'passed':>6} {'ran':>5} {'tests':>5} {'fail':>5} {'error':>5} {'skip':>5} "
            f"{'s':>7}  status"]
    for r in results:
        rows.append(f"{r.module:<42} {r.passed:>6} {r.ran:>5} {r.defined:>5} {r.failures:>5} {r.errors:>5} "
                    f"{r.skipped:>5} {r.seconds:>7.1f}  {r.status}")
    total = {k: sum(getattr(r, k) for r in results) for k in ("passed", "ran", "defined", "failures",
                                                               "errors", "skipped", "seconds")}
    rows.append(f"{'total':<42} {total['passed']:>6} {total['ran']:>5} {total['defined']:>5} "
                f"{total['failures']:>5} {total['errors']:>5} {total['skipped']:>5} {total['seconds']:>7.1f}")
    return "\n".join(rows)


def details(results: list[FileResult]) -> str:
    out = []
    for r in results:
        for f in r.failed:
            out.append(f"{r.module}: {f.kind} {f.test}: {f.reason}")
        if r.status in ("crashed", "timeout"):
            out.append(f"{r.module}: {r.status}; last lines:\n" + "\n".join("    " + ln for ln in r.tail.splitlines()))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout", type=Path, help="a checkout of Ascend/torchair (its tests/st is copied)")
    ap.add_argument("--files", nargs="*", default=None, help="modules to run (default: the CMakeLists' list)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per file (default 900)")
    ap.add_argument("--json", action="store_true", help="print the whole result as JSON")
    ap.add_argument("--keep", type=Path, default=None,
                    help="work in this folder and keep it (the copies, each file's .log, the ledgers)")
    ap.add_argument("--check", action="store_true",
                    help="airctl's eager comparison of each compiled graph too (default: the tests' own checks)")
    ap.add_argument("--airctl", default=None, help="the airctl command (default: this Python's -m airctl)")
    args = ap.parse_args(argv)
    st = args.checkout / "tests" / "st"
    if not (st / "CMakeLists.txt").is_file():
        ap.error(f"{st} has no CMakeLists.txt: not an Ascend/torchair checkout")
    modules = args.files or modules_from_cmake(st)
    modules = [m[:-3] if m.endswith(".py") else m for m in modules]
    airctl = args.airctl.split() if args.airctl else [sys.executable, "-m", "airctl"]
    work_root = args.keep or Path(tempfile.mkdtemp(prefix="airctl-conformance-"))
    work = work_root / "st"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(st, work)
    # the test op registry CI links into its fake GE, where sim reads a model's IR declarations
    shutil.copyfile(STANDIN_DIR / "ascend_ir.yaml", work / "ascend_ir.yaml")
    results = []
    try:
        for module in modules:
            r = run_file(module, work, airctl, work_root / "runs", args.timeout, args.check)
            results.append(r)
            if not args.json:
                print(f"{module}: {r.passed}/{r.defined} passed ({r.status}, {r.seconds:.0f} s)",
                      file=sys.stderr, flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work_root, ignore_errors=True)
    if args.json:
        print(json.dumps({"checkout": str(args.checkout), "files": [asdict(r) for r in results],
                          "passed": sum(r.passed for r in results),
                          "defined": sum(r.defined for r in results)}, indent=1))
    else:
        print(table(results))
        extra = details(results)
        if extra:
            print("\n" + extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
