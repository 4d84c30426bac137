"""A node's source line is the user's or the library's frame, never airctl's own (its wrappers)."""

from __future__ import annotations

from pathlib import Path

import airctl
from airctl.io.fx_reader import source_of

AIRCTL = Path(airctl.__file__).resolve().parent


def _trace(*frames: tuple[str, int]) -> dict:
    return {"stack_trace": "".join(f'  File "{f}", line {n}, in fn\n    code\n' for f, n in frames)}


def test_airctl_frames_are_skipped() -> None:
    lib = "/venv/site-packages/transformers/models/llama/modeling_llama.py"
    meta = _trace(("/home/me/model.py", 10), (lib, 120), (str(AIRCTL / "sim" / "patched_torch_device_word.py"), 67))
    assert source_of(meta) == f"{lib}:120"


def test_torch_distributed_frames_are_skipped_and_a_lone_frame_stays() -> None:
    meta = _trace(("/home/me/ddp.py", 5), ("/venv/site-packages/torch/distributed/c10d.py", 900))
    assert source_of(meta) == "/home/me/ddp.py:5"
    only = _trace((str(AIRCTL / "sim" / "npu_sdpa.py"), 3))
    assert source_of(only) == f"{AIRCTL / 'sim' / 'npu_sdpa.py'}:3"  # nothing else to point at
    assert source_of({}) is None
