"""The folder a sim session's child processes find first on ``PYTHONPATH`` (:mod:`airctl.sim.child`)."""
