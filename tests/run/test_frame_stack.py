"""A deep call under :func:`call_roomy` maps no frame-stack block per call (CPython >= 3.11).

The probe calls a one-line function 2,000 times at each of 200 stack depths (more than one block of
frames) and counts the minor page faults of each loop: at the depth where the callee's frame starts a
new 16 KiB block, a plain call maps (and faults in) a fresh block every time; under ``call_roomy`` no
depth does.
"""

from __future__ import annotations

import resource
import sys

import pytest

from airctl.pipeline.run.frame_stack import call_roomy

CALLS = 2000

pytestmark = pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info < (3, 11), reason="frames live on the heap here")


def _leaf() -> int:
    return 1


def _faults_at(depth: int) -> int:
    if depth:
        return _faults_at(depth - 1)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(CALLS):
        _leaf()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def _worst_depth() -> int:
    return max(_faults_at(depth) for depth in range(200))


def test_a_plain_call_at_a_block_edge_maps_a_block_per_call() -> None:
    # the probe itself: without this, the roomy test below could pass on a probe that sees nothing
    assert _worst_depth() >= CALLS * 0.9


def test_under_call_roomy_no_depth_maps_a_block_per_call() -> None:
    assert call_roomy(_worst_depth) < CALLS * 0.1


def test_call_roomy_passes_arguments_and_results_and_raises_through() -> None:
    assert call_roomy(lambda a, b=0: (a, b), 1, b=2) == (1, 2)
    with pytest.raises(ZeroDivisionError):
        call_roomy(lambda: 1 / 0)
