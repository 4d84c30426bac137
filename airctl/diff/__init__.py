"""Structural graph diff: match nodes across two graphs (:mod:`.match`), then report (:mod:`.report`);
two runs stage by stage (:mod:`.runs`).

>>> from airctl.diff import diff_graphs                          # doctest: +SKIP
>>> diff_graphs(before, after).to_json()["added"]               # doctest: +SKIP
[{'name': 'wait', 'op': 'air.wait.default', 'stream': None}]
"""

from airctl.diff.match import Matching, match_graphs
from airctl.diff.report import DiffReport, diff_graphs
from airctl.diff.runs import RunsDiff, diff_runs

__all__ = ["DiffReport", "Matching", "RunsDiff", "diff_graphs", "diff_runs", "match_graphs"]
