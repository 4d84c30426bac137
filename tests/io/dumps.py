"""Paths of the committed TorchAir dumps (fixtures/dumps/make_dumps.py regenerates them)."""

from __future__ import annotations

from pathlib import Path

DUMPS = Path(__file__).resolve().parents[2] / "fixtures" / "dumps"
VARIANTS = ("plain", "stream")
STAGES = ("original", "optimized")
GE_DUMPS = [DUMPS / v / f"{s}.{t}" for v in VARIANTS for s in STAGES for t in ("pbtxt", "txt")]
PY_DUMPS = [DUMPS / v / f"{s}.py" for v in VARIANTS for s in STAGES]
FX_BEFORE = DUMPS / "fx_before.json"
FX_AFTER = DUMPS / "fx_after.json"
