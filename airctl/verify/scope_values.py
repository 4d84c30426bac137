"""Scope attribute values, as TorchAir and GE read them: what a GE dump still shows of a misused scope.

``scope_enter(keys, values)`` becomes ``dict(zip(keys, values))`` and every pair an attribute on
every GE op converted inside the scope (``ScopeAttrs.apply``; ``_enable_inner_parallel`` and
``_op_exec_never_timeout`` as the bool ``value == "True"``, everything else as a string).
So each misuse leaves a signature in the dump (reference/torchair.md §2.1, docs/checks.md):

- strings instead of lists: ``zip("_user_stream_label", "stream_1")`` gives the pairs
  ``_→s u→t s→r e→e r→a _→m s→_ t→1``, and the ops carry several one-letter attributes with
  one-letter values and no ``_user_stream_label`` (they stay on the default stream);
- only the values a string: the label is the first letter of the intended one (``s``);
- ``_user_stream_priority`` that is not a decimal integer, a switch written ``"true"``/``"1"``
  (false in GE).

Stream labels that differ only by case, ``_`` or ``-`` are checked on FX and GE graphs alike.
"""

from __future__ import annotations

import re
from typing import Any

from airctl.graph.model import STREAM_LABEL, Graph
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.rules import make_finding

PRIORITY_KEY = "_user_stream_priority"
SWITCH_KEYS = ("_enable_inner_parallel", "_op_exec_never_timeout")
_ONE_LETTER = re.compile(r"^[a-z_]$")
_INTEGER = re.compile(r"^-?\d+$")
MIN_LETTER_ATTRS = 3  # "_user_stream_label" zipped with anything of 3+ characters leaves at least 3 keys


def priority_problem(value: Any) -> str | None:
    if isinstance(value, str) and _INTEGER.match(value.strip()):
        return None
    return f"{PRIORITY_KEY} is {value!r}, not a decimal integer string"


def switch_problem(key: str, value: Any) -> str | None:
    if value in ("True", "False"):
        return None
    return f"{key} is {value!r}: TorchAir writes value == 'True', so this reads as False"


def _letter_attrs(attrs: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in attrs.items() if _ONE_LETTER.match(k) and isinstance(v, str) and len(v) == 1}


def _shown(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def ge_scope_findings(graph: Graph, mode: Mode) -> list[Finding]:
    """R5 and bad values, from the attributes TorchAir left on a GE graph's ops."""
    out: list[Finding | None] = []
    # (an op with fewer attributes than that cannot have that many one-letter ones: not scanned)
    zipped = [n for n in graph.nodes
              if len(n.attrs) >= MIN_LETTER_ATTRS and len(_letter_attrs(n.attrs)) >= MIN_LETTER_ATTRS]
    if zipped:
        pairs = _letter_attrs(zipped[0].attrs)
        letters = set(pairs) <= set(STREAM_LABEL)
        out.append(make_finding(
            "scope_args_not_lists", mode,
            f"{_shown([n.name for n in zipped])} carr{'ies' if len(zipped) == 1 else 'y'} one-letter attributes "
            f"{dict(sorted(pairs.items()))}: a scope_enter got strings instead of lists and TorchAir zipped them "
            f"character by character{' (the keys are letters of ' + repr(STREAM_LABEL) + ')' if letters else ''}; "
            f"these ops have no {STREAM_LABEL} and run on the default stream (R5)", [n.name for n in zipped[:20]],
            graph))
    by_label: dict[str, list[str]] = {}
    bad_values: dict[tuple[str, str, str], list[str]] = {}  # (problem, severity, key) -> ops
    for node in graph.nodes:
        if not node.attrs:  # most ops: nothing below to find
            continue
        label = node.attrs.get(STREAM_LABEL)
        if isinstance(label, str) and len(label) == 1 and label.isalpha():
            by_label.setdefault(label, []).append(node.name)
        if PRIORITY_KEY in node.attrs and (problem := priority_problem(node.attrs[PRIORITY_KEY])):
            bad_values.setdefault((problem, "", PRIORITY_KEY), []).append(node.name)
        for key in SWITCH_KEYS:
            if node.attrs.get(key) in (False, "false", "b: false"):
                problem = (f"{key} is false; only the exact string 'True' turns it on (a scope value 'true' or '1' "
                           f"reads as false)")
                bad_values.setdefault((problem, "info", key), []).append(node.name)
    for (problem, severity, _key), names in bad_values.items():
        out.append(make_finding("scope_value_invalid", mode, f"{_shown(names)}: {problem}", names[:20], graph,
                                severity=severity or None))
    for label, names in by_label.items():
        out.append(make_finding(
            "scope_args_not_lists", mode,
            f"stream label {label!r} on {_shown(names)} is one letter: scope_enter(['{STREAM_LABEL}'], 'stream_1') "
            f"(values a string, not a list) keeps only the first letter of the label (R5)", names[:20], graph,
            severity="warning"))
    return [f for f in out if f is not None]


def _norm(label: str) -> str:
    return label.lower().replace("_", "").replace("-", "")


def similar_label_findings(graph: Graph, mode: Mode) -> list[Finding]:
    """Labels that differ only by case, ``_`` or ``-`` (``stream_1`` / ``stream1``): separate streams."""
    first: dict[str, str] = {}  # label -> first node on it
    for node in graph.nodes:
        if node.stream is not None:
            first.setdefault(node.stream, node.name)
    groups: dict[str, list[str]] = {}
    for label in first:
        groups.setdefault(_norm(label), []).append(label)
    out = []
    for labels in groups.values():
        if len(labels) > 1:
            f = make_finding("similar_stream_labels", mode,
                             f"stream labels {', '.join(repr(x) for x in labels)} differ only by case, '_' or '-': "
                             f"they are {len(labels)} separate streams", [first[x] for x in labels], graph)
            if f is not None:
                out.append(f)
    return out
