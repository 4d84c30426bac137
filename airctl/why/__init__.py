"""``airctl why``: why a run compiled more than once, broke into pieces, recaptured or missed a cache.

:func:`why_table` turns a run's ``index.json`` (``events`` and npugraph_ex's ``captures``, recorded
by the run or read from an imported log) into one ordered table with a reason in plain words, a
``file:line``, the ledger graph and a fix hint per row; :func:`summary_line` is the one line
``compile``, ``run`` and ``show`` print. docs/why.md describes each class.
"""

from airctl.why.table import WhyRow, WhyTable, summary_line, why_table

__all__ = ["WhyRow", "WhyTable", "summary_line", "why_table"]
