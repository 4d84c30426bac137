"""TorchAir's Dynamo guard on the NPU deterministic level under sim (issue 58, item 3): the wheel's own
``torch_npu.dynamo._deterministic_guard`` is installed by TorchAir's compile, a level change between two
calls recompiles, and ``airctl why`` says what changed."""

from __future__ import annotations

import pytest

from airctl.why.hints import hint_for


def test_the_level_is_the_stand_ins_state() -> None:
    from airctl.sim.registry import REGISTRY
    from airctl.sim.torch_npu import npu

    before = REGISTRY.device.deterministic_level
    try:
        npu.set_deterministic_level(2)
        assert npu._get_deterministic_level() == 2
        for bad in (4, -1, True, "1"):
            with pytest.raises(ValueError, match="deterministic level must be 0, 1, 2 or 3"):
                npu.set_deterministic_level(bad)
    finally:
        REGISTRY.device.deterministic_level = before


def test_why_names_the_level_change() -> None:
    hint = hint_for("recompile", {"reason": "torch_npu.npu._get_deterministic_level() == 0", "guard": "other"}, set())
    assert hint is not None and "deterministic level changed" in hint


@pytest.mark.slow
def test_a_level_change_between_calls_recompiles() -> None:
    import torch

    from airctl.backends.sim import sim_context
    from airctl.pipeline.run.execution import RunExecution
    from airctl.sim.session import session

    compiles: list[int] = []
    with session(sim_context(RunExecution())) as torchair:
        import torch_npu

        backend = torchair.get_npu_backend(compiler_config=torchair.CompilerConfig())

        def counting(gm, inputs, **kwargs):
            compiles.append(torch_npu.npu._get_deterministic_level())
            return backend(gm, inputs, **kwargs)

        torch._dynamo.reset()
        g = torch.compile(lambda x: torch.mm(x, x).abs(), backend=counting)
        x = torch.randn(4, 4)
        g(x)
        g(x)
        torch_npu.npu.set_deterministic_level(1)
        g(x)
        g(x)
        assert compiles == [0, 1]  # one compile per level, none for a call at a level seen before
    torch._dynamo.reset()
