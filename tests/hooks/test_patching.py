"""Patches put everything back, even when one undo step is interrupted (airctl/hooks/patching.py)."""

from __future__ import annotations

import types

import pytest

from airctl.hooks.patching import Patches


def test_an_undo_step_that_raises_leaves_the_others_to_run_then_raises() -> None:
    box = types.SimpleNamespace(a=1, b=2)

    def interrupted() -> None:
        raise KeyboardInterrupt  # a Ctrl-C landing while the patches are taken off

    with pytest.raises(KeyboardInterrupt):
        with Patches() as p:
            p.setattr(box, "a", 10)
            p.defer(interrupted)
            p.setattr(box, "b", 20)
    assert (box.a, box.b) == (1, 2)
