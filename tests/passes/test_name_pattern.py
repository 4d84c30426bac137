"""The linear-time matcher of ``name:`` selectors agrees with Python's ``re.fullmatch`` on what it accepts.

Random patterns over the syntax pass files use (literals, classes, ``.``, ``\\d``/``\\w``, groups,
alternation, greedy and lazy repeats, anchors, ``\\b``, inline ``(?i:)``) against random names;
any disagreement is a bug of :mod:`airctl.passes.name_pattern`.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from airctl.passes.name_pattern import compile_pattern

ATOMS = ["a", "b", "_", "1", ".", "[ab]", "[^a]", "[a-c1]", r"\d", r"\w", r"\W", "(a|b)", "(?:ab)", "(?i:A)", r"\b",
         "^", "$", "(mm|addmm)"]
REPEATS = ["", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "*?", "+?", "??"]
pattern = st.lists(st.tuples(st.sampled_from(ATOMS), st.sampled_from(REPEATS)), min_size=1, max_size=5).map(
    lambda parts: "".join(a + r for a, r in parts))
name = st.text(alphabet="abcA_1m d", max_size=10)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(pattern, st.lists(name, min_size=1, max_size=6))
def test_it_matches_exactly_what_python_re_fullmatches(p: str, names: list[str]) -> None:
    try:
        expected = re.compile(p)
    except re.error:  # "\\b*": not a pattern at all (the pass file's reader says so)
        return
    ours = compile_pattern(p)
    for n in names:
        assert ours.fullmatch(n) == (expected.fullmatch(n) is not None), (p, n)


def test_names_of_real_graphs_match_as_before() -> None:
    assert compile_pattern(r"mm(_\d+)?").fullmatch("mm_12")
    assert compile_pattern(r"(?i)MM.*").fullmatch("mm_default")
    assert not compile_pattern(r"add").fullmatch("addmm")
    assert compile_pattern(r".*add.*").fullmatch("addmm")
