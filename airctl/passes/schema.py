"""The YAML pass-file format, version 1, as data: one JSON-Schema-like dict per pass kind.

The same tables drive validation (:func:`validate`, used by :mod:`airctl.passes.spec`), the
``airctl passes list`` listing and the reference in docs/passes.md, so the three cannot drift.
The dialect is a small subset of JSON Schema: ``type`` (one name or a list), ``properties``,
``required``, ``additionalProperties: False``, ``enum``, ``items``, ``minimum``, ``default``,
``description``, plus two airctl keys: ``anyRequired`` (at least one of these fields) and
``oneRequired`` (exactly one of these fields).

Scope keys and values follow TorchAir's scope APIs (reference/torchair.md §1.2–1.3): every value
is a string, and ``_user_stream_label`` comes first because aclgraph takes ``values[0]`` as the
label (rule R6).

>>> sorted(KINDS)[:3]
['limit_core_num', 'op_never_timeout', 'python']
>>> [e.path for e in validate({"stream": 3}, {"type": "object", "properties": {"stream": {"type": "string"}}})]
[('stream',)]
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Any

from airctl.graph.roles import COLLECTIVE_KINDS

VERSION = 1
STAGES = ("pre", "post")
GRAPH_KINDS = ("inference", "forward", "backward")

SELECTOR: dict[str, Any] = {
    "type": "object",
    "description": "Which FX nodes a pass acts on. Fields combine with AND; at least one of target, name, "
                   "source, module, collective.",
    "properties": {
        "target": {"type": ["string", "array"], "items": {"type": "string"},
                   "description": "op target: aten.mm.default (torch.ops. prefix accepted; aten.mm matches every "
                                  "overload); a list matches any of them"},
        "name": {"type": "string", "description": "regular expression the whole FX node name must match"},
        "source": {"type": "string",
                   "description": "user source location: file.py:12, file.py:10-20 or file.py, matched against "
                                  "every frame of the node's stack trace (path suffix)"},
        "module": {"type": "string",
                   "description": "nn.Module path prefix, with glob components: layers.0.mlp, layers.*.attn; "
                                  "a trailing $ matches the module itself, not its children"},
        "collective": {"type": ["string", "array"], "items": {"type": "string"},
                       "enum": [*COLLECTIVE_KINDS, "any"],
                       "description": "collectives of this kind (all_reduce, all_gather, reduce_scatter, all_to_all, "
                                      "broadcast, send, recv, or any), whichever FX op issues them; each match's "
                                      "group also takes its wait_tensor, so a scope spans the collective and its wait"},
        "index": {"type": "integer",
                  "description": "keep only the index-th match (0-based; negative counts from the end)"},
        "nth": {"type": "integer", "description": "same as index"},
    },
    "additionalProperties": False,
    "anyRequired": ["target", "name", "source", "module", "collective"],
}

RANGE: dict[str, Any] = {
    "type": "object",
    "description": "from the first node `from` matches to the last node `to` matches, in graph order",
    "properties": {"from": SELECTOR, "to": SELECTOR},
    "required": ["from", "to"],
    "additionalProperties": False,
}

COMMON: dict[str, dict[str, Any]] = {
    "name": {"type": "string", "description": "unique pass name (ledger stage yaml:<name>, `on:` of waits)"},
    "kind": {"type": "string", "description": "what the pass does (see the kinds below)"},
    "stage": {"type": "string", "enum": list(STAGES), "default": "pre",
              "description": "pre = config.post_grad_custom_pre_pass (before TorchAir's FX passes), post = "
                             "post_grad_custom_post_pass (after them: views are aten.reshape.default there)"},
    "description": {"type": "string", "description": "free text"},
    "optional": {"type": "boolean", "default": False,
                 "description": "skip the pass (instead of failing) when a selector matches nothing"},
    "graphs": {"type": "array", "items": {"type": "string", "enum": list(GRAPH_KINDS)},
               "description": "apply only to these AOT graphs (default: all)"},
    "check_results": {"type": "boolean", "default": True,
                      "description": "run the graph eagerly before and after the pass and fail if results change"},
    "timeout": {"type": "number", "minimum": 0, "default": 600,
                "description": "seconds the pass may run before it is stopped and fails by name (0: no limit)"},
    "placements": {"type": "array", "items": {"type": "integer", "minimum": 0},
                   "description": "apply only these of the pass's units (0-based, in the order its ledger stage "
                                  "lists them as `placements`): spans, record groups, wait sites, or the nodes a "
                                  "python plugin changed; `airctl bisect` writes it"},
}

_SPAN: dict[str, dict[str, Any]] = {
    "range": RANGE,
    "select": dict(SELECTOR, description="the span from the first to the last node this selector matches"),
    "each": {"type": ["boolean", "string"], "default": False,
             "description": "one scope per group of matches: true groups by the module the `module` selector "
                            "matched (every match alone without one); a glob such as layers.* groups by that "
                            "module prefix"},
}

_EACH = {"each": _SPAN["each"]}


def _kind(description: str, fields: dict[str, dict[str, Any]], required: list[str],
          one_required: list[str] | None = None, scope_keys: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "description": description,
        "properties": {**COMMON, **fields},
        "required": ["name", "kind", *required],
        "additionalProperties": False,
    }
    if one_required:
        schema["oneRequired"] = one_required
    if scope_keys:
        schema["scope_keys"] = scope_keys  # field -> TorchAir scope key, in scope_enter order
    return schema


KINDS: dict[str, dict[str, Any]] = {
    "stream_scope": _kind(
        "run a node range on another stream: scope_enter(['_user_stream_label', ...], [...]) before its first "
        "node, [record,] scope_exit after its last (torchair.scope.npu_stream_switch)",
        {
            "stream": {"type": "string", "description": "stream label (_user_stream_label)"},
            "priority": {"type": "integer", "description": "stream priority (_user_stream_priority); omitted: not set"},
            "inner_parallel": {"type": "boolean",
                               "description": "_enable_inner_parallel (CANN > 9.0.0); omitted: not set"},
            "record": {"type": "boolean", "default": False,
                       "description": "insert air.record after the range's last node, inside the scope"},
            **_SPAN,
        },
        ["stream"], ["range", "select"],
        [("stream", "_user_stream_label"), ("priority", "_user_stream_priority"),
         ("inner_parallel", "_enable_inner_parallel")],
    ),
    "limit_core_num": _kind(
        "limit the cores of a node range (torchair.scope.limit_core_num)",
        {
            "aicore_num": {"type": "integer", "minimum": 0, "description": "_op_aicore_num"},
            "vectorcore_num": {"type": "integer", "minimum": 0, "description": "_op_vectorcore_num"},
            **_SPAN,
        },
        ["aicore_num", "vectorcore_num"], ["range", "select"],
        [("aicore_num", "_op_aicore_num"), ("vectorcore_num", "_op_vectorcore_num")],
    ),
    "super_kernel": _kind(
        "fuse a node range into one super kernel (torchair.scope.super_kernel); scope '' opts out",
        {
            "scope": {"type": "string", "description": "_super_kernel_scope"},
            "options": {"type": "string", "default": "", "description": "_super_kernel_options"},
            **_SPAN,
        },
        ["scope"], ["range", "select"],
        [("scope", "_super_kernel_scope"), ("options", "_super_kernel_options")],
    ),
    "op_never_timeout": _kind(
        "never time out the ops of a node range (torchair.scope.op_never_timeout)",
        {
            "enable": {"type": "boolean", "default": True, "description": "_op_exec_never_timeout"},
            **_SPAN,
        },
        [], ["range", "select"],
        [("enable", "_op_exec_never_timeout")],
    ),
    "record": _kind(
        "insert air.record after the last node of each group of matches (a token waits can name with `on:`)",
        {"after": SELECTOR, **_EACH},
        ["after"],
    ),
    "wait": _kind(
        "insert air.wait([record]) before the first node of each group of matches, on the latest record of each "
        "pass named in `on` that precedes it",
        {
            "before": SELECTOR,
            "on": {"type": ["string", "array"], "items": {"type": "string"},
                   "description": "name(s) of record passes or stream_scope passes with record: true"},
            **_EACH,
        },
        ["before", "on"],
    ),
    "python": _kind(
        "call a Python function with TorchAir's custom-pass signature fn(gm, example_inputs, config) -> None; it "
        "must mutate gm in place",
        {"plugin": {"type": "string",
                    "description": "path/to/file.py:function (relative to the YAML file, then the working folder)"}},
        ["plugin"],
    ),
}

SCOPE_KINDS = tuple(k for k, s in KINDS.items() if "scope_keys" in s)

FILE: dict[str, Any] = {
    "type": "object",
    "description": "a YAML pass file",
    "properties": {
        "version": {"type": "integer", "enum": [VERSION], "description": "format version (1)"},
        "description": {"type": "string", "description": "free text"},
        "check_results": {"type": "boolean", "default": True, "description": "default of every pass's check_results"},
        "timeout": {"type": "number", "minimum": 0, "default": 600, "description": "default of every pass's timeout"},
        "passes": {"type": "array", "items": {"type": "object"}, "description": "the passes, applied in order"},
    },
    "required": ["version", "passes"],
    "additionalProperties": False,
}

# Common misspellings and synonyms: accepted nowhere, but named in the hint.
ALIASES = {"label": "stream", "stream_label": "stream", "kind_": "kind", "type": "kind", "after_node": "after",
           "before_node": "before", "wait_on": "on", "function": "plugin", "file": "plugin"}

_TYPES = {"string": str, "integer": int, "boolean": bool, "number": (int, float), "object": dict, "array": list,
          "null": type(None)}


@dataclass
class SchemaViolation:
    path: tuple[Any, ...]  # where in the document: ("passes", 0, "range", "from")
    message: str
    hint: str | None = None
    at_key: bool = False  # point at the key (unknown key) rather than its value


def type_name(value: Any) -> str:
    for name, py in _TYPES.items():
        if name == "number":
            continue
        if isinstance(value, bool):
            return "boolean"
        if isinstance(value, py):
            return name
    return "number" if isinstance(value, float) else type(value).__name__


def _is(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def closest(word: str, choices: list[str]) -> str | None:
    if word in ALIASES and ALIASES[word] in choices:
        return ALIASES[word]
    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return found[0] if found else None


def validate(value: Any, schema: dict[str, Any], path: tuple[Any, ...] = ()) -> list[SchemaViolation]:
    """Every violation of ``schema`` in ``value`` (empty when valid)."""
    out: list[SchemaViolation] = []
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is(value, t) for t in names):
            want = " or ".join(names)
            out.append(SchemaViolation(path, f"`{_label(path)}` must be {_article(want)}, got {type_name(value)} "
                                             f"{_show(value)}"))
            return out
    if "enum" in schema:  # a value, or each item of a list of them ("type": ["string", "array"])
        listed = isinstance(value, list) and "items" in schema
        for where, item in ([((*path, i), v) for i, v in enumerate(value)] if listed else [(path, value)]):
            if item not in schema["enum"]:
                choices = ", ".join(str(c) for c in schema["enum"])
                guess = closest(str(item), [str(c) for c in schema["enum"]])
                out.append(SchemaViolation(where, f"`{_label(where)}` must be one of {choices}, got {_show(item)}",
                                           hint=f"did you mean {guess!r}?" if guess else None))
    if _is(value, "number") and not math.isfinite(value):  # YAML's .nan and .inf: no JSON number
        out.append(SchemaViolation(path, f"`{_label(path)}` must be a finite number, got {value}"))
    elif "minimum" in schema and _is(value, "number") and value < schema["minimum"]:
        out.append(SchemaViolation(path, f"`{_label(path)}` must be >= {schema['minimum']}, got {value}"))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            out.extend(validate(item, schema["items"], (*path, i)))
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in props:
                    guess = closest(str(key), list(props))
                    where = f" in {_label(path)}" if path else ""
                    out.append(SchemaViolation(
                        (*path, key), f"unknown key `{key}`{where}",
                        hint=(f"did you mean `{guess}`? " if guess else "") + "allowed: " + ", ".join(props),
                        at_key=True))
        for key in schema.get("required", []):
            if key not in value:
                out.append(SchemaViolation(path, f"missing required key `{key}`" + (f" in {_label(path)}" if path
                                                                                     else "")))
        any_of = schema.get("anyRequired")
        if any_of and not any(k in value for k in any_of):
            out.append(SchemaViolation(path, f"`{_label(path)}` needs at least one of: " + ", ".join(any_of)))
        one_of = schema.get("oneRequired")
        if one_of:
            present = [k for k in one_of if k in value]
            if len(present) != 1:
                verb = "needs" if not present else "takes only one of"
                out.append(SchemaViolation(path, f"`{_label(path)}` {verb} " + " or ".join(one_of)))
        for key, sub in props.items():
            if key in value:
                out.extend(validate(value[key], sub, (*path, key)))
    return out


def _label(path: tuple[Any, ...]) -> str:
    text = ""
    for p in path:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return text or "file"


def _article(want: str) -> str:
    return ("an " if want[0] in "aeiou" else "a ") + want


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def fields_of(kind: str) -> list[dict[str, Any]]:
    """The fields of a kind, for ``airctl passes list``: name, type, required, default, description."""
    schema = KINDS[kind]
    required = set(schema["required"])
    one = schema.get("oneRequired", [])
    rows = []
    for key, sub in schema["properties"].items():
        types = sub.get("type", "")
        rows.append({
            "field": key,
            "type": "selector" if sub.get("properties", {}).keys() == SELECTOR["properties"].keys()
            else ("range" if sub is RANGE else (types if isinstance(types, str) else "|".join(types))),
            "required": "required" if key in required else ("one of " + "/".join(one) if key in one else ""),
            "default": sub.get("default"),
            "enum": sub.get("enum"),
            "description": sub.get("description", ""),
        })
    return rows


def as_json() -> dict[str, Any]:
    """The whole format as one JSON document (``airctl passes list --json``)."""
    return {"version": VERSION, "file": FILE, "kinds": KINDS, "selector": SELECTOR, "range": RANGE}
