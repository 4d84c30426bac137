"""Profiling summaries and outputs over :class:`airctl.execute.timeline.Timeline` (docs/profile.md).

``summary`` (busy/idle per stream, overlap, critical path, top ops), ``chrome_trace`` (Perfetto),
``timeline_svg`` (the picture), ``analyze`` (a torch_npu profiler folder → Timeline), ``compare``
(with/without a pass file) and ``write`` (the files under ``<ledger>/profile/``). Pure Python: no torch.
"""
