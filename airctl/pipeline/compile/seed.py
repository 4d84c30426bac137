"""``--seed N``: the random generators a model script draws from, set to N where a run needs them equal.

A model script's weights, inputs and dropout masks come from torch's (and often Python's and
NumPy's) random generators. Seeded before the script loads, before the eager reference and before
the compiled run, two runs of one script draw the same numbers, and the eager and the compiled run
start from the same random state, so a difference between them is the compile's, not the dice's.
The seed is recorded in ``index.json`` (``seed``) so that a run can be repeated exactly.
"""

from __future__ import annotations

import random
import sys


def seed_all(seed: int | None) -> None:
    """Seed torch, Python's ``random`` and NumPy (when the script uses it) with ``seed``; None: nothing."""
    if seed is None:
        return
    import torch

    torch.manual_seed(seed)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)
