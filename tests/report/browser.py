"""Headless Chromium for report tests: the DOM after the viewer's JS ran, and screenshots."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    for name in NAMES:
        exe = shutil.which(name)
        if exe:
            return exe
    return None


def need_chromium() -> str:
    exe = find_chromium()
    if exe is None:
        pytest.skip("no chromium binary on PATH (scripts/setup.sh installs Debian's `chromium`)")
    return exe


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    base = [need_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-extensions"]
    return subprocess.run(base + args, capture_output=True, text=True, timeout=timeout, check=False)


def dump_dom(page: Path, fragment: str = "", budget_ms: int = 3000, timeout: float = 90) -> str:
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    proc = _run(["--enable-logging=stderr", "--v=0", f"--virtual-time-budget={budget_ms}", "--dump-dom", url], timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if "Uncaught" in line]
    assert not errors, f"JavaScript errors in {url}: {errors[:3]}"
    return proc.stdout


def screenshot(page: Path, png: Path, fragment: str = "", timeout: float = 90) -> None:
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    proc = _run(["--virtual-time-budget=3000", "--window-size=1280,800", f"--screenshot={png}", url], timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
