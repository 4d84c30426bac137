"""Profiling summaries and outputs over :class:`airctl.execute.timeline.Timeline` (docs/profile.md).

``summary`` (busy/idle per stream, overlap, critical path, top ops), ``chrome_trace`` (Perfetto),
``timeline_svg`` (the picture), ``analyze`` (torch_npu profiler folders → a Timeline per rank, read
by the ``ascend`` readers), ``ranks`` (their summaries, and the cross-rank view), ``ledger_link``
(tasks renamed after graph nodes), ``compare`` (with/without a pass file) and ``write`` (the files
under ``<ledger>/profile/``). Pure Python: no torch.
"""
