"""Multi-stream execution of FX graphs off-NPU: one worker per stream, the mode's sync semantics,
races and deadlocks reported at run time (docs/execute.md).

- :mod:`~airctl.execute.schedule`: which stream runs each node, what it waits for (static);
- :mod:`~airctl.execute.executor`: :class:`StreamExecutor`, threads on the CPU;
- :mod:`~airctl.execute.cuda`: the same on real ``torch.cuda`` streams and events;
- :mod:`~airctl.execute.sim_hooks`: where it runs under sim (GE graphs, aclgraph forwards);
- :mod:`~airctl.execute.recorder`: where runs report (races, timed events);
- :mod:`~airctl.execute.timeline`: the data a run leaves.

Importing this package does not import torch.
"""
