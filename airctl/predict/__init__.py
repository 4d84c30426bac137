"""Predict what a stream plan does on the NPU, off the NPU: replay the plan with device times.

``airctl profile --times TIMES`` answers "how much step time does this plan save on the NPU,
and where does the step wait?" without an NPU and without running the model. The pieces:

- :mod:`.plan`: the graph that runs, as tasks per stream with the orderings the mode gives
  (record/wait, TorchAir's closure events, GE's control and cross-stream data edges);
- :mod:`.times` (a CSV), :mod:`.profiled` (a torch_npu profiler folder), :mod:`.estimate` (shapes
  against a device table, :mod:`.devices`): where each task's device time comes from;
- :mod:`.replay`: the model itself (docs/profile.md "Predicted profiles"), a discrete-event
  simulation whose result is an ordinary :class:`~airctl.execute.timeline.Timeline`, so every
  summary, trace and picture of ``airctl profile`` comes from it unchanged;
- :mod:`.prediction`: the ``predicted`` record (step time, busy per stream, overlap, critical
  path, what the table did not cover).

Nothing here imports torch: a prediction reads graphs from a ledger.
"""
