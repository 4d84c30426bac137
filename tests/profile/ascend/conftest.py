"""A writable copy of a realistic profiler folder (fixtures/profiles/npu_level1 by default)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PROFILES = REPO / "fixtures" / "profiles"


@pytest.fixture
def folder(tmp_path: Path) -> Callable[..., Path]:
    """``folder("npu_level0")`` → ``<tmp>/<name>/<rank folder>`` (the *_ascend_pt folder), a copy."""

    def make(name: str = "npu_level1") -> Path:
        shutil.copytree(PROFILES / name, tmp_path / name)
        (rank,) = (tmp_path / name).iterdir()
        return rank

    return make
