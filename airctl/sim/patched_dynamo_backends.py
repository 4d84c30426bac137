"""Patch of Dynamo's backend registry under sim: the ``"npu"`` and ``"npugraph_ex"`` backends.

On an NPU host ``import torch_npu`` registers both names (``torch.compile(backend="npu")`` →
``torchair.get_npu_backend()``; ``"npugraph_ex"`` → the wheel's own ``npugraph_ex.get_npu_backend``,
its ``options={...}`` passed on; TorchAir's with ``mode = "npugraph_ex"`` when the wheel has no npugraph_ex).
The real wheel cannot be imported here, so the sim session registers the same two for its
length, resolving ``torchair.get_npu_backend`` when Dynamo calls them (so airctl's wrappers of it
see these graphs too), and puts back whatever was registered under those names before.
"""

from __future__ import annotations

from typing import Any

from airctl.hooks.patching import Patches


def patch(p: Patches, torchair: Any) -> None:
    from torch._dynamo.backends import registry

    def npu_backend(gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        return torchair.get_npu_backend()(gm, example_inputs, **kwargs)

    def npugraph_ex_backend(gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        import sys

        package = sys.modules.get("npugraph_ex")  # the wheel's own package (sim.npugraph_ex_package)
        if package is not None:
            config = package.CompilerConfig()
            return package.get_npu_backend(compiler_config=config)(gm, example_inputs, **kwargs)
        config = torchair.CompilerConfig()
        config.mode = "npugraph_ex"
        return torchair.get_npu_backend(compiler_config=config)(gm, example_inputs, **kwargs)

    backends = {"npu": npu_backend, "npugraph_ex": npugraph_ex_backend}
    for name in backends:  # register_backend refuses a name that exists: clear it (restored on exit)
        p.setitem(registry._BACKENDS, name)
        p.setitem(registry._COMPILER_FNS, name)
    for name, fn in backends.items():
        registry.register_backend(fn, name)
