"""Patch of one TorchAir internal: ``torchair._utils.graph_transform_observer.GraphTransformObserver``.

TorchAir routes every FX pass of its compiler (``apply_gm_pass``), every GE pass
(``apply_gegraph_pass``) and its stage dumps (``dump_gm(gm, "graph")`` for the AOT graph,
``dump_gegraph`` for the original/optimized GE graphs) through this observer; it only writes
files when ``TORCH_COMPILE_DEBUG=1``. airctl wraps those four methods to notify the active
:class:`~airctl.pipeline.capture.CaptureSession` (if any) and then calls TorchAir's original,
so TorchAir's own behaviour, logs and dumps are unchanged. Works the same on the npu backend.
"""

from __future__ import annotations

import time
from typing import Any

_patched = False


def install() -> None:
    global _patched
    if _patched:
        return
    from torchair._utils import graph_transform_observer as gto

    from airctl.pipeline.capture import current_session

    cls = gto.GraphTransformObserver
    orig_apply_gm = cls.apply_gm_pass
    orig_apply_ge = cls.apply_gegraph_pass
    orig_dump_gm = cls.dump_gm
    orig_dump_ge = cls.dump_gegraph

    def apply_gm_pass(self, pass_fn, pass_name, enable_log=False):
        session = current_session()
        if session is None:
            return orig_apply_gm(self, pass_fn, pass_name, enable_log)
        session.before_fx_pass(pass_name, self.gm)
        start = time.perf_counter()
        try:
            res = orig_apply_gm(self, pass_fn, pass_name, enable_log)
        except BaseException as e:
            session.fx_pass_failed(pass_name, self.gm, e, time.perf_counter() - start)
            raise
        session.after_fx_pass(pass_name, self.gm, time.perf_counter() - start, res)
        return res

    def apply_gegraph_pass(self, pass_fn, ge, pass_name):
        session = current_session()
        if session is None:
            return orig_apply_ge(self, pass_fn, ge, pass_name)
        before = ge.SerializeToString() if hasattr(ge, "SerializeToString") else None
        start = time.perf_counter()
        res = orig_apply_ge(self, pass_fn, ge, pass_name)
        changed = None if before is None else before != ge.SerializeToString()
        session.after_ge_pass(pass_name, ge, time.perf_counter() - start, changed)
        return res

    def dump_gm(self, gm, file_name):
        session = current_session()
        if session is not None and file_name == "graph":
            session.aot_graph(gm, getattr(gto.debug_ctx, "phase", "forward"))
        elif session is not None and file_name.startswith("graph_after_"):
            # aclgraph passes announce themselves only through these dumps
            session.dumped_fx_pass(file_name[len("graph_after_"):], gm)
        return orig_dump_gm(self, gm, file_name)

    def dump_gegraph(self, ge: Any, file_name):
        session = current_session()
        if session is not None:
            session.ge_stage(file_name, ge)
        return orig_dump_ge(self, ge, file_name)

    cls.apply_gm_pass = apply_gm_pass
    cls.apply_gegraph_pass = apply_gegraph_pass
    cls.dump_gm = dump_gm
    cls.dump_gegraph = dump_gegraph
    _patched = True
