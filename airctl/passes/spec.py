"""Read a YAML pass file into :class:`PassFile`, with every error pointing at its line and column.

YAML is parsed with ``yaml.SafeLoader`` (no arbitrary objects), subclassed so that each mapping
and list remembers where its keys and items were written (:mod:`airctl.passes.yaml_marks`); schema violations
(:mod:`airctl.passes.schema`) and the semantic checks below then raise
:class:`~airctl.errors.SpecError` with ``file:line:column`` and a hint (closest key, closest
pass name). Semantic checks: unique pass names; ``wait.on`` names an earlier record pass (or a
scope pass with ``record: true``) of the same or an earlier stage; post-stage selectors that
name ``aten.view`` (TorchAir's ``view_to_reshape`` runs before the post hook) are warnings.

>>> spec = parse_text("version: 1\\npasses:\\n  - {name: a, kind: record, after: {target: aten.mm.default}}\\n")
>>> [(p.name, p.kind, p.stage, p.line) for p in spec.passes]
[('a', 'record', 'pre', 3)]
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from airctl.errors import SpecError
from airctl.limits import PASS_FILE_BYTES
from airctl.passes import schema
from airctl.passes.name_pattern import PatternError, compile_pattern
from airctl.passes.time_limit import DEFAULT_SECONDS
from airctl.passes.yaml_marks import MarkedLoader, where
from airctl.safe_files import read_regular

SOURCE_LINES = re.compile(r"\d+(-\d+)?")  # what may follow a `source:` selector's last colon: 12 or 10-20


@dataclass
class Selector:
    target: list[str] = field(default_factory=list)  # normalised: no torch.ops. prefix
    name: str | None = None
    source: str | None = None
    module: str | None = None
    index: int | None = None
    line: int | None = None
    column: int | None = None
    collective: list[str] = field(default_factory=list)  # collective kinds, or ["any"]

    def describe(self) -> str:
        parts = []
        if self.target:
            parts.append("target " + "|".join(self.target))
        if self.name is not None:
            parts.append(f"name ~ {self.name}")
        if self.source is not None:
            parts.append(f"source {self.source}")
        if self.module is not None:
            parts.append(f"module {self.module}")
        if self.collective:
            parts.append("collective " + "|".join(self.collective))
        if self.index is not None:
            parts.append(f"index {self.index}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "name": self.name, "source": self.source, "module": self.module,
                "collective": self.collective, "index": self.index, "line": self.line}


@dataclass
class PassSpec:
    name: str
    kind: str
    stage: str
    fields: dict[str, Any]  # the kind's own fields, as written (selectors parsed below)
    line: int
    column: int
    optional: bool = False
    graphs: list[str] | None = None
    check_results: bool = True
    timeout: float | None = DEFAULT_SECONDS  # seconds; None: no limit (passes/time_limit.py)
    placements: list[int] | None = None  # keep only these units of the pass (airctl bisect)
    selectors: dict[str, Selector] = field(default_factory=dict)  # select/after/before/from/to
    on: list[str] = field(default_factory=list)
    each: bool | str = False
    file: str | None = None
    marks: dict[str, tuple[int, int]] = field(default_factory=dict)  # field -> (line, col) of its value

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "stage": self.stage, "line": self.line,
                "optional": self.optional, "graphs": self.graphs, "fields": self.fields,
                "selectors": {k: s.to_json() for k, s in self.selectors.items()}, "on": self.on,
                "placements": self.placements}


@dataclass
class PassFile:
    path: Path | None
    passes: list[PassSpec]
    description: str | None = None
    warnings: list[SpecError] = field(default_factory=list)

    def stage(self, stage: str) -> list[PassSpec]:
        return [p for p in self.passes if p.stage == stage]

    def get(self, name: str) -> PassSpec | None:
        return next((p for p in self.passes if p.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path) if self.path else None, "description": self.description,
                "passes": [p.to_json() for p in self.passes],
                "warnings": [w.to_json() for w in self.warnings]}


def load(path: Path | str) -> PassFile:
    """Parse and check a pass file; raises :class:`SpecError` at the offending line."""
    return parse_text(pass_text(path), Path(path))


def pass_text(path: Path | str) -> str:
    """A pass file's text, read as a regular file within :data:`~airctl.limits.PASS_FILE_BYTES`
    (a caller that also edits the text parses this one: the file read once is the file checked)."""
    path = Path(path)
    try:
        data = read_regular(path, PASS_FILE_BYTES, error=SpecError, what="pass file",
                            hint="a pass file is YAML of a few hundred lines; give its path")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise SpecError(f"pass file not found: {path}", file=str(path)) from None
    except OSError as e:
        raise SpecError(f"cannot read pass file: {e}", file=str(path)) from e
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise SpecError(f"not UTF-8 text ({e.reason} at byte {e.start})", file=str(path), line=line,
                        hint="pass files are UTF-8 YAML") from None
    return text


def parse_text(text: str, path: Path | None = None) -> PassFile:
    file = str(path) if path else None
    try:
        data = yaml.load(text, Loader=MarkedLoader)  # noqa: S506 - a SafeLoader subclass
    except SpecError as e:
        e.file = file
        raise
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        problem = e.problem or str(e)
        context = f" ({e.context})" if e.context else ""
        raise SpecError(f"YAML syntax error: {problem}{context}", file=file, line=line, column=col,
                        hint="check indentation and that every `key: value` has a space after the colon") from None
    except yaml.YAMLError as e:
        raise SpecError(f"YAML syntax error: {e}", file=file) from None
    except RecursionError:  # PyYAML composes nested nodes recursively
        raise SpecError("the YAML nests too deep to be a pass file", file=file, line=1,
                        hint="a pass file is a few levels deep: version, passes, and each pass's fields") from None
    if not isinstance(data, dict):
        raise SpecError("a pass file is a mapping with `version: 1` and `passes:`", file=file, line=1, column=1,
                        hint="start from `airctl passes list` or passes/stream.yaml")
    return _build(data, file, path)


def _check(value: Any, sch: dict[str, Any], doc: Any, base: tuple[Any, ...], file: str | None) -> None:
    violations = schema.validate(value, sch, base)
    if violations:
        v = violations[0]
        line, col = where(doc, v.path, v.at_key)
        raise SpecError(v.message, file=file, line=line, column=col, hint=v.hint)


def _target(name: str) -> str:
    return name.strip().removeprefix("torch.ops.")


def _selector(raw: dict[str, Any]) -> Selector:
    targets = raw.get("target")
    target_list = [targets] if isinstance(targets, str) else list(targets or [])
    index = raw.get("index", raw.get("nth"))
    line = getattr(raw, "line", None)
    collective = raw.get("collective")
    return Selector([_target(t) for t in target_list], raw.get("name"), raw.get("source"), raw.get("module"), index,
                    line, getattr(raw, "column", None),
                    [collective] if isinstance(collective, str) else list(collective or []))


def _seconds(raw: dict[str, Any], default: float | None) -> float | None:
    """A ``timeout:`` (the schema checked it: a finite number >= 0): None for 0 (no limit)."""
    return (float(raw["timeout"]) or None) if "timeout" in raw else default


def _build(doc: dict[str, Any], file: str | None, path: Path | None) -> PassFile:
    _check(doc, schema.FILE, doc, (), file)
    default_check = doc.get("check_results", True)
    default_timeout = _seconds(doc, DEFAULT_SECONDS)
    passes: list[PassSpec] = []
    warnings: list[SpecError] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(doc["passes"]):
        base = ("passes", i)
        if not isinstance(raw, dict):
            line, col = where(doc, base)
            raise SpecError(f"passes[{i}] must be a mapping (name, kind, ...), got {schema.type_name(raw)}", file=file,
                            line=line, column=col)
        kind = raw.get("kind")
        if kind not in schema.KINDS:
            line, col = where(doc, (*base, "kind") if "kind" in raw else base)
            guess = schema.closest(str(kind), list(schema.KINDS)) if kind is not None else None
            what = f"unknown pass kind `{kind}`" if kind is not None else f"passes[{i}] has no `kind`"
            raise SpecError(what, file=file, line=line, column=col,
                            hint=(f"did you mean `{guess}`? " if guess else "") + "kinds: " + ", ".join(schema.KINDS))
        _check(raw, schema.KINDS[kind], doc, base, file)
        name = raw["name"]
        line, col = where(doc, base)
        if name in seen:
            nline, ncol = where(doc, (*base, "name"))
            raise SpecError(f"duplicate pass name `{name}` (first at line {seen[name]})", file=file, line=nline,
                            column=ncol, hint="pass names must be unique: waits and ledger stages refer to them")
        seen[name] = line or 0
        fields = {k: v for k, v in raw.items() if k not in schema.COMMON}
        spec = PassSpec(
            name=name, kind=kind, stage=raw.get("stage", "pre"), fields=dict(fields), line=line or 0,
            column=col or 0, optional=bool(raw.get("optional", False)), graphs=raw.get("graphs"),
            check_results=bool(raw.get("check_results", default_check)), file=file,
            timeout=_seconds(raw, default_timeout),
            each=raw.get("each", False),
            placements=list(raw["placements"]) if "placements" in raw else None,
            marks={k: where(doc, (*base, k)) for k in raw},  # type: ignore[misc]
        )
        for key in ("select", "after", "before"):
            if key in raw:
                spec.selectors[key] = _selector(raw[key])
        if "range" in raw:
            spec.selectors["from"] = _selector(raw["range"]["from"])
            spec.selectors["to"] = _selector(raw["range"]["to"])
        if kind == "wait":
            on = raw["on"]
            spec.on = [on] if isinstance(on, str) else list(on)
        _check_selectors(spec, doc, base, file)
        if spec.stage == "post":
            warnings.extend(_view_warnings(spec))
        passes.append(spec)
    _check_waits(passes, doc, file)
    return PassFile(path, passes, doc.get("description"), warnings)


def _check_selectors(spec: PassSpec, doc: Any, base: tuple[Any, ...], file: str | None) -> None:
    for sel in spec.selectors.values():
        if sel.name is not None:
            try:
                compile_pattern(sel.name)
            except PatternError as e:
                raise SpecError(f"`name` is not a valid regular expression for airctl: {e}", file=file,
                                line=sel.line, column=sel.column,
                                hint="names are matched in time linear in their length (no backreferences or "
                                     "lookarounds); a `target:`, `module:` or `source:` selector may fit") from None
        if sel.source is not None:
            _, sep, tail = sel.source.rpartition(":")
            if sep and tail and not SOURCE_LINES.fullmatch(tail):
                raise SpecError(f"`source` must be file.py, file.py:LINE or file.py:FIRST-LAST, got {sel.source!r}",
                                file=file, line=sel.line, column=sel.column)
    if isinstance(spec.each, str) and spec.each.strip() == "":
        line, col = spec.marks.get("each", (spec.line, spec.column))
        raise SpecError("`each` must be true, false or a module glob such as layers.*", file=file, line=line,
                        column=col)


def _view_warnings(spec: PassSpec) -> list[SpecError]:
    out = []
    for sel in spec.selectors.values():
        if any(t == "aten.view" or t.startswith("aten.view.") for t in sel.target):
            out.append(SpecError(
                f"pass `{spec.name}` runs at stage post, where TorchAir's view_to_reshape has already replaced "
                f"aten.view.default by aten.reshape.default: this selector will match nothing",
                file=spec.file, line=sel.line, column=sel.column,
                hint="select aten.reshape.default, or run the pass at stage: pre"))
    return out


def record_makers(passes: list[PassSpec]) -> dict[str, PassSpec]:
    """Passes whose nodes a ``wait`` can name in ``on:``."""
    return {p.name: p for p in passes
            if p.kind == "record" or (p.kind == "stream_scope" and p.fields.get("record"))}


def _check_waits(passes: list[PassSpec], doc: Any, file: str | None) -> None:
    makers = record_makers(passes)
    order = {p.name: i for i, p in enumerate(passes)}
    for i, p in enumerate(passes):
        if p.kind != "wait":
            continue
        line, col = p.marks.get("on", (p.line, p.column))
        for target in p.on:
            if target not in makers:
                guess = difflib.get_close_matches(target, list(makers), n=1, cutoff=0.5)
                other = next((q for q in passes if q.name == target), None)
                if other is not None:
                    why = (f"pass `{target}` makes no record (kind {other.kind}"
                           + (", record: false)" if other.kind == "stream_scope" else ")"))
                    hint = "add `record: true` to it" if other.kind == "stream_scope" else \
                        "a wait needs a record pass or a stream_scope pass with record: true"
                else:
                    why = f"wait `{p.name}` waits on unknown record `{target}`"
                    hint = (f"did you mean `{guess[0]}`? " if guess else "") + (
                        "records: " + ", ".join(makers) if makers else "no pass in this file makes a record")
                raise SpecError(why, file=file, line=line, column=col, hint=hint)
            maker = makers[target]
            if maker.stage == "post" and p.stage == "pre":
                raise SpecError(f"wait `{p.name}` (stage pre) cannot wait on `{target}` (stage post): the post hook "
                                f"runs after the pre hook", file=file, line=line, column=col,
                                hint="move both passes to the same stage")
            if maker.stage == p.stage and order[target] > i:
                raise SpecError(f"wait `{p.name}` comes before the pass `{target}` that makes its record", file=file,
                                line=line, column=col, hint="passes run in file order: move the wait after it")
