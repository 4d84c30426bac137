"""What a sim run imports and caches on first use, paid once in a long-lived warm process.

A warm command (docs/warm.md) is forked from a process that imported torch and TorchAir, but its
compile still imported some 500 more modules on first use (npugraph_ex, Dynamo's and
AOTAutograd's lazy imports, transformers' modelling infrastructure) and tokenized the library
files Dynamo traces through: about a second of a tiny transformers model's warm compile.
:func:`first_use` pays for them in the warm process instead.

Each is imported as a run imports it: with the stand-ins in place (``import torch_npu`` gives
:mod:`airctl.sim.torch_npu`, TorchAir's C++ extensions are :mod:`airctl.sim.torchair_core`'s, the
process singletons of :mod:`.registry`), for the import only, as :func:`.session.load_torchair`
imports TorchAir itself. Nothing run-specific is in place: a session's own patches (its
executors, its custom-op table, the device word, process groups) are the run's, and no module
imported here keeps a reference to what they replace (tests/sim/test_preload.py). transformers
asks ``torch_npu`` whether an NPU is there once and caches the answer: here, as in a run, it asks
the stand-in.

Not here: a user's model module (it changes between commands), and anything that starts a thread
or the CPU kernels' thread pools (a fork would copy their locks).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from airctl.hooks import signal_handlers
from airctl.hooks.patching import Patches
from airctl.sim import npugraph_ex_package, patched_torch_npu, patched_torchair_extension

# imported by Dynamo, AOTAutograd and torch.export inside a compile, on first use
TORCH = ("torch._dynamo.repro.after_dynamo", "torch._dynamo.dce_extra_outputs", "torch._subclasses.schema_check_mode",
         "torch.fx.experimental.validator", "torch._inductor.compiler_bisector",
         "torch._inductor.fx_passes.dedupe_symint_uses", "torch._higher_order_ops.passes.inline_invoke_subgraph",
         "torch._functorch._aot_autograd.subclass_codegen", "torch.export._trace", "torch.profiler._cupti_monitor",
         "torch.distributed.tensor.experimental._func_map", "torch.distributed.checkpoint",
         "torch.distributed.elastic.agent.server.local_elastic_agent")
# TorchAir's custom-op compiler and aclgraph converter. Not its converters for the wheel's npu ops
# (``ge_converter.custom``, imported at the first FX node without a converter): each logs its
# registration into the run's log.txt as it is imported
TORCHAIR = ("torchair._ge_concrete_graph.custom_op_pre_scan",
            "torchair._ge_concrete_graph.custom_op_compiler", "torchair._ge_concrete_graph.custom_op_codegen_cpp",
            "torchair.patterns._recover_view_inplace_pattern", "torchair._acl_concrete_graph.acl_graph",
            "torchair._acl_concrete_graph.fx2acl_converter")
# transformers' modelling infrastructure, which every model module of it imports
TRANSFORMERS = ("transformers.models", "transformers.modeling_utils", "transformers.generation",
                "transformers.masking_utils", "transformers.modeling_layers",
                "transformers.integrations.sdpa_attention",
                "transformers.cache_utils", "transformers.activations", "transformers.modeling_outputs",
                "transformers.modeling_rope_utils", "transformers.processing_utils")
# the library files whose code Dynamo traces through for most models: it tokenizes each once
# (torch._dynamo.funcname_cache, for the names in its trace log) when it first creates a node there
TRACED = {"torch": ("nn/modules/module.py", "nn/modules/linear.py", "nn/modules/sparse.py",
                    "nn/modules/activation.py", "nn/modules/normalization.py", "nn/modules/container.py",
                    "nn/modules/dropout.py", "nn/functional.py"),
          "transformers": ("modeling_utils.py", "cache_utils.py", "activations.py", "masking_utils.py",
                           "modeling_layers.py", "integrations/sdpa_attention.py", "utils/generic.py")}


def first_use() -> None:
    """Import and cache what a run would on first use (see the module); TorchAir is loaded."""
    from airctl.sim.registry import REGISTRY
    from airctl.sim.torchair_loader import torch_npu_root

    for name in TORCH:
        _optional(name)
    root = torch_npu_root()
    with Patches() as p, signal_handlers.kept():
        patched_torchair_extension.patch(p)
        patched_torch_npu.patch(p)
        p.module("torchair", REGISTRY.torchair)
        for name in TORCHAIR:
            _optional(name)
        if root is not None:
            npugraph_ex_package.load(root)
        if importlib.util.find_spec("transformers") is not None:
            for name in TRANSFORMERS:
                _optional(name)
    _traced_files()


def _optional(name: str) -> None:
    """Import ``name``; one this install lacks or cannot import is left for the run to meet."""
    try:
        importlib.import_module(name)
    except Exception:  # noqa: BLE001, S110 - the run imports it again and reports what it meets
        pass


def _traced_files() -> None:
    from torch._dynamo import funcname_cache

    for package, files in TRACED.items():
        module = sys.modules.get(package)
        if module is None or getattr(module, "__file__", None) is None:
            continue
        for name in files:
            path = os.path.join(os.path.dirname(module.__file__), name)
            if os.path.isfile(path):
                funcname_cache.get_funcname(path, 0)
