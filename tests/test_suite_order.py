"""The suite's own schedule (tests/conftest.py): the files it starts first are files that exist; the
sweeps are left out unless asked for, and each swept case of a test leaves a case of it in the run."""

from __future__ import annotations

import pytest

from tests.conftest import HEAVY_FIRST, KEPT, REPO, SWEPT


def test_every_file_scheduled_first_exists_once() -> None:
    missing = [name for name in HEAVY_FIRST if not (REPO / name).is_file()]
    assert not missing, f"renamed or removed: update HEAVY_FIRST in tests/conftest.py: {missing}"
    assert len(set(HEAVY_FIRST)) == len(HEAVY_FIRST)


def test_the_sweeps_are_left_out_unless_asked_for(request: pytest.FixtureRequest) -> None:
    config = request.config
    asked = config.getoption("sweeps") or "sweep" in (config.getoption("markexpr") or "")
    running = [item.nodeid for item in request.session.items if item.get_closest_marker("sweep") is not None]
    assert asked or not running, f"sweeps in a run that did not ask for them: {running[:5]}"


def test_each_swept_case_leaves_a_case_of_its_test_in_the_run() -> None:
    """A parametrized test whose cases are all sweeps would leave the suite without it."""
    swept = [item for item in SWEPT if hasattr(item, "callspec")]
    if not swept:
        pytest.skip("no parametrized sweep was collected and left out (--sweeps, or only some files named)")
    kept = {(item.path, item.originalname) for item in KEPT if hasattr(item, "callspec")}
    alone = sorted({item.nodeid.split("[", 1)[0] for item in swept if (item.path, item.originalname) not in kept})
    assert not alone, f"every case of these tests is a sweep: {alone}"
