"""The npugraph_ex mode of a compile.

npugraph_ex is not a ``config.mode`` of TorchAir's ``CompilerConfig`` but a package of its own in
the torch-npu wheel (reference/torchair.md, "npugraph_ex"): its own ``CompilerConfig`` (about 28
flat options), its own ``get_npu_backend`` and FX compiler, and no graph-dump option (its
generated code is what the ledger keeps). This module builds that config from a compile request
and picks the backend a config belongs to, so the compiler stays mode-agnostic. ``--option``, for
every mode, is :mod:`airctl.pipeline.compile.options`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airctl.modes import Mode


def npugraph_ex_package() -> Any:
    """The wheel's npugraph_ex (sim puts it at ``npugraph_ex``; on an NPU torch_npu's lazy proxy does)."""
    import importlib

    try:
        return importlib.import_module("npugraph_ex")
    except ImportError as e:
        from airctl.errors import BackendError

        raise BackendError(f"npugraph_ex cannot be imported: {e}",
                           hint="npugraph_ex ships in torch-npu >= 2.13.0 (torch_npu/dynamo/npugraph_ex)") from e


# aclgraph passes npugraph_ex's config switches off (airctl bisect): pass -> (option, value that turns it off);
# the FX passes it runs through its observer are skipped there (airctl.hooks.pass_switch)
OFF_SWITCHES = {"remove_cat_ops": ("remove_cat_ops", False), "reinplace_inplaceable_ops_pass": ("inplace_pass", False),
                "reinplace_input_mutated_ops": ("input_inplace_pass", False)}


def build_npugraph_ex_config(pre: Any, post: Any, torchair_off: Sequence[str] = ()) -> Any:
    """npugraph_ex's own ``CompilerConfig`` with airctl's pass hooks (YAML or raw callables) and the
    passes ``airctl bisect`` switches off."""
    config = npugraph_ex_package().CompilerConfig()
    for name in torchair_off:
        if name in OFF_SWITCHES:
            option, value = OFF_SWITCHES[name]
            setattr(config, option, value)
    if pre is not None:
        config.post_grad_custom_pre_pass = pre
    if post is not None:
        config.post_grad_custom_post_pass = post
    return config


def backend_for(torchair: Any, config: Any) -> Any:
    """The Dynamo backend a config belongs to: npugraph_ex's for its config, else TorchAir's."""
    if type(config).__module__.startswith("npugraph_ex"):
        return npugraph_ex_package().get_npu_backend(compiler_config=config)
    return torchair.get_npu_backend(compiler_config=config)


def compile_dynamic(mode: Mode) -> bool | None:
    """``torch.compile(dynamic=...)``: npugraph_ex runs as its users run it (Dynamo's default: a shape
    that changes makes the graph dynamic, and each new shape is a capture), the other modes static."""
    return None if mode.is_npugraph_ex else False
