"""The verifier's findings on 400 random multi-stream FX graphs (every mode) and 400 GE graphs equal the golden ones.

The golden file was written by the verifier before its fast paths (per-op caches, the plan's
segments, the vector-clock walk on plain tuples): a change of any finding, its order, message,
hint or source shows here (tests/verify/random_graphs.py says what the graphs hold)."""

from __future__ import annotations

import json

from tests.verify.random_graphs import GOLDEN, SEEDS, findings_digest


def test_random_graphs_give_the_golden_findings_in_every_mode() -> None:
    golden = json.loads(GOLDEN.read_text())
    assert len(golden) == SEEDS
    for seed in range(SEEDS):
        assert findings_digest(seed) == golden[str(seed)], f"seed {seed}"
