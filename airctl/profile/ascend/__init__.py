"""Readers of what ``torch_npu.profiler`` writes, one module per file format (docs/profile.md §analyze).

A profiler folder (``<host>_<pid>_<stamp>_ascend_pt``, one per rank) is read into a
:class:`~airctl.profile.ascend.model.RankData`: device tasks with exact integer-nanosecond times,
each on a hardware stream, communication marked, steps, and the profiler's own per-step numbers.

- :mod:`.folders`    which folders, which rank each is (``profiler_info*.json``), newest per rank
- :mod:`.times`      exact µs text → integer ns; plausibility checks
- :mod:`.table`      CSV files as torch_npu writes them (CRLF, quoted TABs, odd encodings)
- :mod:`.kernels`    ``kernel_details.csv`` at every export level and version
- :mod:`.trace`      ``trace_view.json``: hardware stream lanes, communication, host steps
- :mod:`.placement`  streams for rows that lack one (Level0, HCCL) from the trace's lanes
- :mod:`.step_trace` ``step_trace_time.csv`` (the profiler's per-step breakdown)
- :mod:`.db`         the ``.db`` export (``ascend_pytorch_profiler*.db``, ``analysis.db``)
- :mod:`.read`       one folder → RankData (which source wins); :mod:`.breakdown` per-step numbers;
  :mod:`.timeline`   RankData → Timeline; :mod:`.cross_rank` several ranks side by side.
"""
