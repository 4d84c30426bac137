"""Patch of one TorchAir internal: ``torchair._utils.graph_transform_observer.GraphTransformObserver``
(both backends: this is how airctl sees TorchAir's passes on an NPU too).

TorchAir routes every FX pass of its compiler (``apply_gm_pass``), every GE pass
(``apply_gegraph_pass``) and its stage dumps (``dump_gm(gm, "graph")`` for the AOT graph,
``dump_gm(gm, "graph_after_<pass>")`` for the aclgraph passes, ``dump_gegraph`` for the
original/optimized GE graphs) through this observer; it only writes files when
``TORCH_COMPILE_DEBUG=1``. For the length of a capture, the four methods hand each event to the
:class:`~airctl.hooks.capture.CaptureListener` — which runs the pass itself, through its pass
runner — and TorchAir's original still does the work, so its behaviour, logs and dumps are
unchanged.
"""

from __future__ import annotations

import threading
from typing import Any

from airctl.hooks.patching import Patches


def patch(p: Patches, listener: Any, gto: Any = None) -> None:
    """Patch TorchAir's observer, or ``gto``: another package's copy of the module (npugraph_ex's
    ``_utils.graph_transform_observer`` has the same FX methods and no GE ones)."""
    if gto is None:
        from torchair._utils import graph_transform_observer as gto

    cls = gto.GraphTransformObserver
    orig_apply_gm = cls.apply_gm_pass
    orig_dump_gm = cls.dump_gm
    inside = threading.local()  # an FX pass running: its own "graph_after_<pass>" dump is not a pass

    def apply_gm_pass(self, pass_fn, pass_name, enable_log=False):
        def run() -> Any:
            inside.depth = getattr(inside, "depth", 0) + 1
            try:
                return orig_apply_gm(self, pass_fn, pass_name, enable_log)
            finally:
                inside.depth -= 1

        return listener.run_fx_pass(pass_name, self.gm, run)

    def dump_gm(self, gm, file_name):
        if file_name == "graph":
            listener.aot_graph(gm, getattr(gto.debug_ctx, "phase", "forward"))
        elif file_name.startswith("graph_after_") and not getattr(inside, "depth", 0):
            listener.dumped_fx_pass(file_name[len("graph_after_"):], gm)  # aclgraph passes announce themselves so
        return orig_dump_gm(self, gm, file_name)

    p.setattr(cls, "apply_gm_pass", apply_gm_pass)
    p.setattr(cls, "dump_gm", dump_gm)
    if not hasattr(cls, "apply_gegraph_pass"):
        return
    orig_apply_ge = cls.apply_gegraph_pass
    orig_dump_ge = cls.dump_gegraph

    def apply_gegraph_pass(self, pass_fn, ge, pass_name):
        return listener.run_ge_pass(pass_name, ge, lambda: orig_apply_ge(self, pass_fn, ge, pass_name))

    def dump_gegraph(self, ge: Any, file_name):
        listener.ge_stage(file_name, ge)
        return orig_dump_ge(self, ge, file_name)

    p.setattr(cls, "apply_gegraph_pass", apply_gegraph_pass)
    p.setattr(cls, "dump_gegraph", dump_gegraph)
