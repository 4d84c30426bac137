"""The GE op table agrees with TorchAir's converters: functions TorchAir converts to GE, run from
their GE ops (not the FX graph behind them), give what eager PyTorch gives.

Inside the test the session's ``GeConcreteGraph.__call__`` wrapper (which runs the converted FX
graph) is taken away, so ``TorchNpuGraph.run`` has no runner and executes the GE graph TorchAir
built, op by op, through :mod:`airctl.execute.ge_ops`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # a TorchAir compile per case


def _cases() -> dict[str, Callable[..., Any]]:
    import torch
    from torch.nn import functional

    return {
        "add": lambda x, y: x + y, "add_alpha": lambda x, y: torch.add(x, y, alpha=2.0),
        "sub_mul_div": lambda x, y: (x - y) * y / (y.abs() + 1), "mm": lambda x, y: x @ y.t(),
        "bmm": lambda x, y: torch.bmm(x.unsqueeze(0), y.t().unsqueeze(0)), "relu": lambda x, y: torch.relu(x),
        "cat_split": lambda x, y: torch.split(torch.cat([x, y], 1), [3, 5], 1),
        "sum_mean": lambda x, y: x.sum(1) + x.mean(1), "softmax": lambda x, y: x.softmax(-1),
        "transpose_reshape": lambda x, y: x.t().reshape(2, 6) + 1, "where_max": lambda x, y: torch.where(
            x > y, torch.maximum(x, y), y), "unary": lambda x, y: torch.log(torch.exp(x)) * torch.sigmoid(y),
        "linear": lambda x, y: functional.linear(x, y, torch.ones(3)), "gelu_silu": lambda x, y: functional.gelu(
            x, approximate="tanh") + functional.silu(y), "layer_norm": lambda x, y: functional.layer_norm(x, [4]),
        "slices": lambda x, y: x[:, 1:3] + y[:, ::2], "argmax": lambda x, y: x.argmax(1),
        "cast": lambda x, y: x.to(torch.float16).float(), "stack_unsqueeze": lambda x, y: torch.stack(
            [x, y]).unsqueeze(1), "index": lambda x, y: x[torch.tensor([0, 2])],
        "embedding": lambda x, y: functional.embedding(torch.tensor([[0, 1], [2, 0]]), x),
        "topk": lambda x, y: torch.topk(x, 2)[0], "clamp": lambda x, y: x.clamp(-0.5, 0.5),
    }


@pytest.mark.parametrize("case", sorted(_cases()))
def test_a_converted_function_runs_from_its_ge_ops_and_matches_eager(case: str) -> None:
    import torch

    from airctl.backends.sim import sim_context
    from airctl.execute.recorder import Recorder
    from airctl.pipeline.run.execution import RunExecution
    from airctl.sim.session import load_torchair, session

    load_torchair()
    from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph

    unpatched = GeConcreteGraph.__call__
    fn = _cases()[case]
    runs = RunExecution()
    with session(sim_context(runs)) as torchair, runs.recording(Recorder(keep_events=True)) as rec:
        wrapper = GeConcreteGraph.__call__
        GeConcreteGraph.__call__ = unpatched  # no FX graph behind the GE graph: it runs from its ops
        try:
            torch._dynamo.reset()
            x, y = torch.randn(3, 4), torch.randn(3, 4)
            got = torch.compile(fn, backend=torchair.get_npu_backend(), dynamic=False)(x, y)
        finally:
            GeConcreteGraph.__call__ = wrapper
    want = fn(x, y)
    got, want = (got, want) if isinstance(want, (tuple, list)) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, atol=1e-4, rtol=1e-4, check_dtype=False)
    ops = {e.op for t in rec.timelines.values() for e in t.events}
    # getitem: one output of a multi-output op (SplitV, TopKV2, LayerNormV4)
    assert ops and all(op.startswith("ge.") or op == "getitem" for op in ops), ops
