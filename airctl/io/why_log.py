"""Read the events behind ``airctl why`` out of log text: Dynamo's graph breaks and recompiles,
npugraph_ex's captures, TorchAir's compile-cache decisions.

The same words reach airctl two ways: while a run is recorded, Dynamo's ``graph_breaks`` and
``recompiles`` loggers hand their messages to :func:`dynamo_event` one by one; a log brought home
from an NPU machine (``TORCH_LOGS=graph_breaks,recompiles`` output and TorchAir's DEBUG log, in one
file or several) is split by :func:`read_why_log` into the same messages and given to the same
functions, so both tables come from one reading. The messages read (torch 2.13, torch-npu 2.13):

===============================================================  =================================
message                                                          event
===============================================================  =================================
``Graph break in user code at F:L`` + ``Graph Break Reason: R``  ``graph_break`` (torch._dynamo)
``Recompiling function f in F:L`` + ``- 0/0: <guard failure>``   ``recompile``
``torch._dynamo hit config.recompile_limit (8)``                 ``recompile_limit``
``No find captured AclGraph… graph key {K}, and start to capture``  a capture (npugraph_ex)
``The current AclGraph needs to be recaptured for fx_graph G…``  a recapture of a known key
``The capture_limit reached when capturing fx_graph G…``         ``fallback`` to eager
(reduce-overhead: ``static_capture_size_limit``; its capture lines are npugraph_ex's)
``Since P is already installed`` / ``P.run install success``     ``static_kernel_hit`` / ``_miss``
``Loading cache from P`` / ``Compiling cache for F to P``        ``cache_hit`` / ``cache_miss``
``Clear broken cache P as E``                                    ``cache_invalidated``
``UserWarning: Skip cache as F recompiled`` (a warning on stderr)  ``cache_dropped``
===============================================================  =================================

>>> dynamo_event("recompiles", "Recompiling function forward in /m.py:16\\n    triggered by the "
...     "following guard failure(s):\\n    - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8")["reason"]
'x.size(0) was 4, now 8'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from airctl.io.compressed import open_bytes
from airctl.io.log_records import RECORD
from airctl.io.paths import is_airctl_file
from airctl.io.torchair_why import CACHE_DROPPED, torchair_event

# a line of torch's own log format (TORCH_LOGS): V1127 11:55:40.053000 5761 torch/_dynamo/x.py:5124] [0/0] msg
TORCH_LINE = re.compile(r"^(?P<level>[VIWEDC])(?P<date>\d{4}) (?P<time>[\d:.]+) (?P<pid>\d+) (?P<site>\S+:\d+)\] "
                        r"(?:\[(?P<cid>[^\]]+)\] )?(?:\[__(?P<artifact>\w+)\] )?(?P<text>.*)$")
_GB_AT = re.compile(r"Graph break (?:\(user stack suppressed due to duplicate graph break\) )?in user code at "
                    r"(?P<file>.+):(?P<line>\d+)$")
_GB_SKIP = re.compile(r"^torch\.compile will skip tracing the frame (?P<frame>.+) and fall back to eager")
_GB_ID = re.compile(r"/gb/(?P<id>gb\d+)\.html")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>.+)$')
_RECOMPILE = re.compile(r"^Recompiling function (?P<fn>\S+) in (?P<file>.+):(?P<line>\d+)$")
_FAILURE = re.compile(r"^\s*- (?:(?P<cid>\d+/\d+): )?(?P<text>.+)$")
_SIZE = re.compile(r"tensor '(?P<name>.+?)' (?P<what>size|stride) mismatch at index (?P<i>\d+)\. "
                   r"expected (?P<old>\S+), actual (?P<new>\S+)")
_DTYPE = re.compile(r"tensor '(?P<name>.+?)' (?P<what>dtype|device|requires_grad|dispatch key set) mismatch\. "
                    r"expected (?P<old>.+), actual (?P<new>.+)$")
_LIMIT = re.compile(r"^torch\._dynamo hit config\.(?P<limit>\w+) \((?P<value>\d+)\)$")
_LIMIT_FN = re.compile(r"^\s*function: '(?P<fn>[^']+)' \((?P<file>.+):(?P<line>\d+)\)$")
_LIMIT_REASON = re.compile(r"^\s*last reason: (?:(?P<cid>\d+/\d+): )?(?P<text>.+)$")
GENERIC_HINTS = ("Please report an issue to PyTorch", "This graph break is fundamental",
                 "Report an issue to the backend compiler repo")
# Dynamo's name of a guarded input: ``L['x']`` (older torch), ``x``, ``kwargs['input_ids']``, ``L['kwargs']['k']``
_LOCAL = re.compile(r"^[LG]\['(?P<name>[^']+)'\]")


def _user_frame(lines: list[str]) -> tuple[str, int] | None:
    """The innermost frame of a ``User code traceback`` (the last ``File "...", line N``) that is not
    airctl's own (sim's stand-ins, the device word's factory wrappers, are inlined into the user's code)."""
    frames = [m for m in (_FRAME.match(line) for line in lines) if m and not is_airctl_file(m["file"])]
    return (frames[-1]["file"], int(frames[-1]["line"])) if frames else None


def _graph_break(text: str) -> dict[str, Any] | None:
    lines = text.splitlines()
    if not lines:
        return None
    at = _GB_AT.search(lines[0])
    skip = next((m for m in map(_GB_SKIP.match, lines) if m), None)
    if at is None and skip is None:
        return None
    reason_lines: list[str] = []
    explanation = None
    hints: list[str] = []
    in_reason = False
    for line in lines:
        if line.startswith("Graph Break Reason:"):
            in_reason = True
            reason_lines.append(line.removeprefix("Graph Break Reason:").strip())
        elif line.startswith("  Explanation:"):
            in_reason = False
            explanation = line.removeprefix("  Explanation:").strip()
        elif line.startswith("  Hint:"):
            hints.append(line.removeprefix("  Hint:").strip())
        elif in_reason and line.strip() and not line.startswith(" "):
            reason_lines.append(line.strip())
    reason = next((r.rstrip(":") for r in reversed(reason_lines) if r), None)
    gb = _GB_ID.search(text)
    where = (at["file"], int(at["line"])) if at and not is_airctl_file(at["file"]) else _user_frame(lines)
    event: dict[str, Any] = {"kind": "graph_break", "reason": reason or (
        f"Dynamo cannot resume after a graph break: the frame {skip['frame']} runs eagerly" if skip else "graph break")}
    if skip is not None:
        event["skipped_frame"] = skip["frame"]
    if where:
        event["file"], event["line"] = where
    if gb:
        event["gb_id"] = gb["id"].upper()
    if explanation:
        event["explanation"] = explanation
    useful = [h for h in hints if not h.startswith(GENERIC_HINTS)]
    if useful:
        event["dynamo_hint"] = useful[0]
    return event


def _source(name: str) -> str:
    """A guarded input as the Python that reads it in the compiled function: ``L['x']`` -> ``x``,
    ``L['kwargs']['input_ids']`` -> ``kwargs['input_ids']``; anything else as Dynamo wrote it.

    >>> _source("L['kwargs']['input_ids']"), _source("kwargs['input_ids']")
    ("kwargs['input_ids']", "kwargs['input_ids']")
    """
    return _LOCAL.sub(lambda m: m["name"], name, count=1)


def plain_guard(text: str) -> dict[str, Any]:
    """A guard failure in words, with what it concerns (``x.size(0) was 8, now 16``).

    >>> plain_guard("tensor 'x' dtype mismatch. expected Float, actual Half")["reason"]
    'x.dtype was Float, now Half'
    """
    m = _SIZE.search(text)
    if m:
        name = _source(m["name"])
        attr = "size" if m["what"] == "size" else "stride"
        return {"reason": f"{name}.{attr}({m['i']}) was {m['old']}, now {m['new']}", "guard": "shape",
                "input": name, "dim": int(m["i"]), "old": m["old"], "new": m["new"]}
    m = _DTYPE.search(text)
    if m:
        name = _source(m["name"])
        what = m["what"].replace(" ", "_")
        return {"reason": f"{name}.{what} was {m['old'].strip()}, now {m['new'].strip()}", "guard": what,
                "input": name, "old": m["old"].strip(), "new": m["new"].strip()}
    return {"reason": text.strip(), "guard": "other"}


def _recompile(text: str) -> dict[str, Any] | None:
    lines = text.splitlines()
    head = _RECOMPILE.match(lines[0]) if lines else None
    if head is None:
        return None
    failures = [m for m in map(_FAILURE.match, lines[1:]) if m and "triggered by" not in m["text"]]
    event: dict[str, Any] = {"kind": "recompile", "function": head["fn"], "file": head["file"],
                             "line": int(head["line"])}
    if failures:  # the first is the newest compiled version's guard: the one that failed last
        event.update(plain_guard(failures[0]["text"]))
        if failures[0]["cid"]:
            event["failed_entry"] = failures[0]["cid"]
        event["guard_failures"] = [m["text"].strip() for m in failures]
    else:
        event["reason"] = "a guard failed"
    return event


def _recompile_limit(text: str) -> dict[str, Any] | None:
    lines = text.splitlines()
    head = _LIMIT.match(lines[0]) if lines else None
    if head is None:
        return None
    event: dict[str, Any] = {"kind": "recompile_limit", "limit": head["limit"], "value": int(head["value"])}
    for line in lines[1:]:
        fn, last = _LIMIT_FN.match(line), _LIMIT_REASON.match(line)
        if fn:
            event.update(function=fn["fn"], file=fn["file"], line=int(fn["line"]))
        if last:
            event["last_reason"] = plain_guard(last["text"])["reason"]
    event["reason"] = (f"{head['limit']} ({head['value']}) reached: the function runs eagerly from now on"
                       + (f"; last guard: {event['last_reason']}" if "last_reason" in event else ""))
    return event


def dynamo_event(artifact: str | None, text: str, compile_id: str | None = None) -> dict[str, Any] | None:
    """One Dynamo log message as an event (None: not one ``airctl why`` lists)."""
    event = None
    if artifact in (None, "graph_breaks") and "Graph break" in text.split("\n", 1)[0] or "will skip tracing" in text:
        event = _graph_break(text)
    elif artifact in (None, "recompiles", "recompiles_verbose") and text.startswith("Recompiling function"):
        event = _recompile(text)
    elif text.startswith("torch._dynamo hit config."):
        event = _recompile_limit(text)
    if event is not None and compile_id:
        event["compile_id"] = compile_id
    return event


def _messages(lines: Iterable[str]) -> Iterator[tuple[int, str, str | None, str | None, str]]:
    """(line, source, artifact, compile id, message): torch's multi-line records joined (each line of
    one record repeats its header), TorchAir records with their continuation lines."""
    current: tuple[int, str, str | None, str | None, list[str]] | None = None
    header: tuple[str, ...] | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        m = TORCH_LINE.match(line)
        key: tuple[str, ...] | None = None
        if m:
            key = (m["date"], m["time"], m["pid"], m["site"], m["cid"] or "", m["artifact"] or "")
            if current is not None and key == header and current[1] == "torch":
                current[4].append(m["text"])
                continue
            start = (number, "torch", m["artifact"], m["cid"], [m["text"]])
        elif dropped := CACHE_DROPPED.search(line):  # TorchAir says it by warnings.warn: Python's format, one line
            start = (number, "torchair", None, None, [dropped.group(0)])
        elif r := RECORD.match(line):
            start = (number, "torchair", None, None, [r["message"]])
        else:
            if current is not None and current[1] == "torch" and header is not None and header[5] == "" \
                    and line.startswith(" "):  # a plain torch warning's continuation (recompile limit)
                current[4].append(line)
            elif current is not None and current[1] == "torchair" and len(current[4]) < 64:
                current[4].append(line)  # a record's next lines (a module's repr), read only where needed
            continue
        if current is not None:
            yield current[0], current[1], current[2], current[3], "\n".join(current[4])
        current, header = start, key
    if current is not None:
        yield current[0], current[1], current[2], current[3], "\n".join(current[4])


def is_dynamo_log(head: str) -> bool:
    """Does ``head`` (a file's first kilobytes) hold torch's log lines of a graph break, a recompile or
    the recompile limit (``TORCH_LOGS=graph_breaks,recompiles`` output)?"""
    for line in head.split("\n")[:200]:
        m = TORCH_LINE.match(line)
        if m and (m["artifact"] in ("graph_breaks", "recompiles", "recompiles_verbose")
                  or m["text"].startswith("torch._dynamo hit config.")):
            return True
    return False


def read_why_log(lines: Iterable[str]) -> list[dict[str, Any]]:
    """Every event a log's lines hold, in order, each with ``seq`` (its line in the file)."""
    events = []
    for number, source, artifact, cid, text in _messages(lines):
        if source == "torch":
            event = dynamo_event(artifact, text, cid)
        else:
            first = text.split("\n", 1)[0]
            event = torchair_event(text if first.startswith("Compiling cache for") else first)
        if event is not None:
            event["seq"] = number
            events.append(event)
    return events


def read_why_file(path: Path) -> list[dict[str, Any]]:
    """:func:`read_why_log` of a file (``.gz`` read as text)."""
    from airctl.io.bounded_lines import bounded_lines
    from airctl.io.log_records import MAX_LINE

    with open_bytes(path) as f:  # each line cut as it is read: one 200 MB line costs megabytes
        return read_why_log(bounded_lines(f, MAX_LINE))
