"""Helpers for pass tests: TorchAir's air ops, the seed's ATen graph, graphs with source/module metadata."""

from __future__ import annotations

import pytest

from tests.conftest import REPO

PASSES = REPO / "passes"
FIXTURES = REPO / "fixtures" / "passes"


@pytest.fixture(scope="session")
def torch_air():
    from airctl.sim.session import load_torchair

    load_torchair()  # registers torch.ops.air.* (TorchAir's own op library)
    import torch

    return torch


def seed_gm(torch):
    """The seed model's ATen graph as AOT hands it to the custom-pass hooks (mm, abs, add, sub)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    def forward(x):
        mm = torch.mm(x, x)
        return torch.add(torch.abs(mm), 1), torch.sub(x, mm)

    return make_fx(forward)(torch.randn(3, 3))


def layered_gm(torch, layers: int = 2):
    """A graph whose nodes carry stack traces and nn_module_stack, like a real AOT graph of a 2-layer model."""
    import torch.fx as fx

    g = fx.Graph()
    x = g.placeholder("x")
    h = x
    counts: dict[str, int] = {}

    def name(short: str) -> str:
        k = counts.get(short, 0)
        counts[short] = k + 1
        return short if k == 0 else f"{short}_{k}"

    for i in range(layers):
        for j, (op, line) in enumerate([(torch.ops.aten.mm.default, 10), (torch.ops.aten.relu.default, 11),
                                        (torch.ops.aten.mm.default, 12)]):
            module = f"layers.{i}.mlp.up" if j == 0 else (f"layers.{i}.mlp" if j == 1 else f"layers.{i}.mlp.down")
            args = (h, h) if op is torch.ops.aten.mm.default else (h,)
            node = g.create_node("call_function", op, args, name=name(op.__name__.split(".")[0]))
            node.meta["stack_trace"] = (f'  File "/src/model.py", line 40, in forward\n'
                                        f'  File "/src/model.py", line {line}, in forward\n')
            node.meta["nn_module_stack"] = {module: (f"L['self'].{module}", object)}
            h = node
        add = g.create_node("call_function", torch.ops.aten.add.Tensor, (h, x), name=name("add"))
        add.meta["stack_trace"] = '  File "/src/model.py", line 41, in forward\n'
        add.meta["nn_module_stack"] = {f"layers.{i}": (f"L['self'].layers.{i}", object)}
        h = add
    g.output((h,))
    return fx.GraphModule(torch.nn.Module(), g)


def fx_signature(gm) -> list[tuple]:
    """Nodes, order, targets and args (node refs by name): what 'the same FX graph' means."""
    import torch.fx as fx

    def arg(a):
        if isinstance(a, fx.Node):
            return "%" + a.name
        if isinstance(a, (list, tuple)):
            return type(a)(arg(x) for x in a)
        return a

    return [(n.name, n.op, str(n.target), arg(n.args), arg(dict(n.kwargs))) for n in gm.graph.nodes]
