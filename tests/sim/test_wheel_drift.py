"""The drift guard: every config field, scope function, GE option and Dynamo guard the installed
TorchAir and npugraph_ex offer is either modelled by airctl or listed as deliberately ignored, with
the reason, in the one table (airctl/sim/wheel_drift_table.py). A wheel bump that adds one fails here,
naming it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from airctl.sim.torchair_loader import torch_npu_root
from airctl.sim.wheel_drift import unlisted, wheel_items
from airctl.sim.wheel_drift_table import DRIFT_TABLE, IGNORED, MODELLED, TORCHAIR

needs_wheel = pytest.mark.skipif(torch_npu_root() is None, reason="the torch-npu wheel is not installed")


def _check(table: dict[str, tuple[str, str]]) -> None:
    items = wheel_items()
    missing = unlisted(items, table)
    assert not missing, ("new in the torch-npu wheel, neither modelled nor listed as ignored in "
                         f"airctl/sim/wheel_drift_table.py: {', '.join(missing)}")
    stale = sorted(set(table) - items)
    assert not stale, f"rows of airctl/sim/wheel_drift_table.py for items the wheel no longer has: {stale}"
    for item, (status, why) in table.items():
        assert status in (MODELLED, TORCHAIR, IGNORED), item
        assert len(why.strip()) > 10, f"{item}: say why"


@needs_wheel
def test_every_item_of_the_installed_wheel_is_in_the_table() -> None:
    _check(DRIFT_TABLE)


@needs_wheel
def test_the_enumeration_finds_what_issue_58_found_by_hand() -> None:
    items = wheel_items()
    assert {"torchair.config:ge_config.multistream_parallel_mode", "torchair.scope:deterministic",
            "npugraph_ex.scope:limit_core_num", "npugraph_ex.config:record_statistics_debug_info",
            "npugraph_ex.config:unsafe_skip_npugraph_capture_validation", "ge_option:ge.exec.staticMemoryPolicy",
            "ge_option:ge.autoMultistreamParallelMode", "dynamo_guard:install_npu_deterministic_level_guard"} <= items
    assert len([i for i in items if i.startswith("torchair.config:")]) > 50


@needs_wheel
@pytest.mark.parametrize("removed", ["torchair.config:ge_config.multistream_parallel_mode",
                                     "dynamo_guard:install_npu_deterministic_level_guard",
                                     "npugraph_ex.scope:deterministic"])
def test_removing_a_row_names_the_field(removed: str) -> None:
    table = {k: v for k, v in DRIFT_TABLE.items() if k != removed}
    with pytest.raises(AssertionError, match=f"neither modelled nor listed as ignored in .*: {re.escape(removed)}\n"):
        _check(table)
    assert unlisted(wheel_items(), table) == [removed]
    assert unlisted(wheel_items(), {**table, removed: (IGNORED, "  ")}) == [removed]  # a reason is required


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_new_item_in_a_wheel_is_named(tmp_path: Path) -> None:
    root = tmp_path / "torch_npu"
    ta = root / "dynamo" / "torchair"
    _write(ta / "configs" / "_option_base.py", "class OptionValue:\n    pass\n")
    _write(ta / "configs" / "ge_config.py",
           "from torchair.configs._option_base import OptionValue\n"
           "class _GEConfig:\n    def __init__(self):\n        self.new_knob = OptionValue(None, None)\n"
           "    def as_dict(self):\n        return {'ge.newKnob': self.new_knob.value}\n")
    _write(ta / "configs" / "compiler_config.py",
           "from torchair.configs.ge_config import _GEConfig\nfrom torchair.configs._option_base import OptionValue\n"
           "class CompilerConfig:\n    def __init__(self):\n        self.ge_config = _GEConfig()\n"
           "        self.mode = OptionValue('max-autotune', None)\n")
    _write(ta / "scope" / "__init__.py", "def new_scope(x):\n    pass\ndef _private():\n    pass\n")
    _write(ta / "_ge_concrete_graph" / "fx2ge_converter.py", "COMPILE_OPTIONS_WHITELIST = ['ge.listed']\n")
    _write(root / "dynamo" / "_guard.py",
           "def install_new_guard():\n    def _create_guard_fn(b, g):\n        b.add_lambda_guard(None)\n"
           "    tc.add(src.make_guard(_create_guard_fn))\n")
    items = wheel_items(root)
    assert items == {"torchair.config:ge_config.new_knob", "torchair.config:mode", "torchair.scope:new_scope",
                     "ge_option:ge.newKnob", "ge_option:ge.listed", "dynamo_guard:install_new_guard"}
    assert unlisted(items, {"torchair.config:mode": (MODELLED, "--mode")}) == sorted(items - {"torchair.config:mode"})
