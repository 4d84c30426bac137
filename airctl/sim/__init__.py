"""The ``sim`` backend's stand-ins for NPU hardware layers.

TorchAir's own Python code (from the installed torch-npu wheel) does all compiler work; the
modules here replace only what needs an NPU and CANN: the C++ extension
``torchair.core._torchair`` (:mod:`airctl.sim.torchair_core`) and the parts of ``torch_npu``
that TorchAir and user scripts touch (:mod:`airctl.sim.torch_npu`). :mod:`airctl.sim.install`
puts them in place.
"""
