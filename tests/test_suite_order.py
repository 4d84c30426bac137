"""The suite's own schedule (tests/conftest.py): the files it starts first are files that exist."""

from __future__ import annotations

from tests.conftest import HEAVY_FIRST, REPO


def test_every_file_scheduled_first_exists_once() -> None:
    missing = [name for name in HEAVY_FIRST if not (REPO / name).is_file()]
    assert not missing, f"renamed or removed: update HEAVY_FIRST in tests/conftest.py: {missing}"
    assert len(set(HEAVY_FIRST)) == len(HEAVY_FIRST)
