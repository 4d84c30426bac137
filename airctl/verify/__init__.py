"""Static multi-stream verifier for FX and GE graphs (``airctl check``, verify-each).

>>> from airctl.verify import verify                # doctest: +SKIP
>>> for f in verify(graph, "reduce-overhead"):      # doctest: +SKIP
...     print(f.rule, f.nodes)
"""

from airctl.verify.findings import MAX_AUTOTUNE, MODES, REDUCE_OVERHEAD, Finding, finding_for_returned_graph
from airctl.verify.rules import RULES, Rule
from airctl.verify.verifier import verify

__all__ = ["MAX_AUTOTUNE", "MODES", "REDUCE_OVERHEAD", "RULES", "Finding", "Rule", "finding_for_returned_graph",
           "verify"]
