"""airctl: a graph inspector and pass debugger for TorchAir (PyTorch on Ascend NPUs).

Importing this package is cheap on purpose: nothing here imports torch. The CLI and every
library entry point import torch lazily, inside the call that needs it.
"""

__version__ = "0.1.0"
