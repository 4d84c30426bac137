"""Multi-stream execution of FX graphs off-NPU: one worker per stream, the mode's sync semantics,
races and deadlocks reported at run time (docs/execute.md).

- :mod:`~airctl.execute.schedule`: which stream runs each node, what it waits for (static);
- :mod:`~airctl.execute.executor`: :class:`StreamExecutor`, the run loop on CPU threads;
- :mod:`~airctl.execute.hazards`: vector clocks, races and in-place hazards at run time;
- :mod:`~airctl.execute.deadlock`: the static cycle check, stuck detection and the wait timeout;
- :mod:`~airctl.execute.run_state`: the shared state of one call;
- :mod:`~airctl.execute.pool`: :class:`WorkerPool`, the side streams' threads;
- :mod:`~airctl.execute.cuda`: the same on real ``torch.cuda`` streams and events;
- :mod:`~airctl.execute.executors`: :class:`Executors`, the owner of a run's executors (settings,
  cache, recorder, pool), created per run by the pipeline (``pipeline/run/execution.py``) and
  reached from TorchAir's calls through the sim session's context;
- :mod:`~airctl.execute.recorder`: where runs report (races, timed events);
- :mod:`~airctl.execute.timeline`: the data a run leaves;
- :mod:`~airctl.execute.compare`: compiled outputs against a reference (eager PyTorch, or the
  graph before a pass).

Importing this package does not import torch.
"""
