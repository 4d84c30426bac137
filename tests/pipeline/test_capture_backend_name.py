"""Dynamo names the backend it calls in its messages ("Backend compiler `X` failed"): the compile's wrapper
carries TorchAir's name, never airctl's (issue 62)."""

from __future__ import annotations

import functools
from typing import Any

from airctl.pipeline.compile.capture import capturing_backend


def npu_backend(gm: Any, example_inputs: Any, compiler_config: Any = None) -> Any:
    return gm


def test_the_wrapper_is_named_as_torchairs_backend() -> None:
    assert capturing_backend(npu_backend, session=None).__name__ == "npu_backend"  # type: ignore[arg-type]
    partial = functools.partial(npu_backend, compiler_config=object())  # TorchAir's get_npu_backend()
    assert capturing_backend(partial, session=None).__name__ == "npu_backend"  # type: ignore[arg-type]
