"""Multi-stream execution of FX graphs off-NPU (see timeline.py for what a run leaves)."""
