"""Fixtures of the verifier's tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's folder as the working directory, with no AIRCTL_OUT: runs go to ./airctl-runs there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AIRCTL_OUT", raising=False)
    return tmp_path
