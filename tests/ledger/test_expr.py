"""--bad-if: expressions over index.json, and everything else refused (no eval)."""

from __future__ import annotations

import pytest

from airctl.ledger.expr import ExprError, evaluate

INDEX = {"status": "ok", "mode": "reduce-overhead",
         "execution": {"matches_eager": True, "max_abs_error": 0.5, "races": [{"reader": "add"}]},
         "findings": [{"rule": "race_cross_stream_without_wait", "severity": "error"},
                      {"rule": "x", "severity": "warning"}],
         "graphs": [{"id": "1-inference", "stages": [{"name": "aot-inference", "nodes": 6},
                                                     {"name": "yaml:p", "nodes": 9, "changed": True}]}]}


@pytest.mark.parametrize(("expr", "value"), [
    ("len(races) > 0", True),
    ("execution.max_abs_error > 0.1 and status == 'ok'", True),
    ("execution['races'][0].reader == 'add'", True),
    ("any(s.name.startswith('yaml:') and s.nodes > 8 for s in stages)", True),
    ("[f.rule for f in error_findings]", ["race_cross_stream_without_wait"]),
    ("sum(s.nodes for s in stages if s.graph == '1-inference')", 15),
    ("mode in ('max-autotune',)", False),
    ("index.execution.missing is None", True),
    ("not graphs[5]", True),
    ("{1: 2}.get(1) if True else 0", 2),
])
def test_expressions_over_the_index(expr: str, value: object) -> None:
    assert evaluate(expr, INDEX) == value


@pytest.mark.parametrize(("expr", "says"), [
    ("__import__('os').system('true')", "calling `__import__`"),
    ("status.__class__", "`.__class__` on a str"),
    ("(lambda: 1)()", "calling `lambda: 1`"),
    ("[x for x in (lambda: races)()]", "calling"),
    ("open('/etc/passwd')", "calling `open`"),
    ("races.append(1)", "calling `races.append`"),
    ("2 ** 100000", "Pow is not allowed"),
    ("nope > 1", "unknown name `nope`"),
    ("status ==", "syntax error"),
])
def test_anything_but_data_is_refused(expr: str, says: str) -> None:
    with pytest.raises(ExprError, match=says.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        evaluate(expr, INDEX)
