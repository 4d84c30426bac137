"""Compile pipeline: load a model script, compile it through TorchAir with capture, run, compare."""
