"""Compiling through TorchAir with every stage captured: ``airctl compile`` (a model script) and
``airctl run`` (an unmodified TorchAir script), the capture, the checked run."""
