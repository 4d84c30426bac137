"""Static multi-stream verifier for FX and GE graphs (``airctl check``, verify-each).

>>> from airctl.verify import verify                # doctest: +SKIP
>>> for f in verify(graph, Mode.REDUCE_OVERHEAD):      # doctest: +SKIP
...     print(f.rule, f.nodes)
"""

from airctl.verify.findings import Finding, finding_for_returned_graph
from airctl.verify.rules import RULES, Rule
from airctl.verify.verifier import verify

__all__ = ["RULES", "Finding", "Rule", "finding_for_returned_graph", "verify"]
