"""Read Ascend IR declarations (:mod:`airctl.sim.ascend_ir`): airctl's YAML, and CANN's JSON and INI.

``<model>.ascend_ir.yaml`` (or ``ascend_ir.yaml``) beside a model script::

    ops:
      ScaledAdd:
        inputs: [x, y]            # in order; an optional or dynamic one as {bias: optional}, {xs: dynamic}
        outputs: [z]              # {ys: dynamic} for a dynamic output
        attrs: {alpha: float}     # float int bool str data_type list_int list_float list_bool list_str ...
      Accumulate:                 # an in-place op: the mutated input is also an output of the same name
        inputs: [acc, x]
        outputs: [acc, z]
    include:                      # CANN's own op definitions, relative to this file
      - op_proto/scaled_add.json  # msopgen's op definition: [{"op", "input_desc", "output_desc", "attr"}]
      - aic-ascend910b-ops-info.ini   # op info: [Op] input0.name=x, input0.paramType=required, attr.list=...

Every problem is a :class:`~airctl.errors.SpecError` naming the file and, in YAML, the line.
"""

from __future__ import annotations

import configparser
import json
import re
from pathlib import Path
from typing import Any

import yaml

from airctl.errors import SpecError
from airctl.limits import PASS_FILE_BYTES
from airctl.safe_files import read_regular
from airctl.sim.ascend_ir import DECLARATION_NAMES, AscendIr, IrDef, Pairs

INPUT_KINDS = ("required", "optional", "dynamic")
OUTPUT_KINDS = ("required", "dynamic")
VT = ("BOOL", "INT", "FLOAT", "STRING", "DATA_TYPE", "LIST_BOOL", "LIST_INT", "LIST_FLOAT", "LIST_STRING",
      "LIST_DATA_TYPE", "LIST_LIST_INT", "LIST_LIST_FLOAT", "NAMED_ATTRS")
# how attribute types are spelt (YAML, msopgen JSON, op-info INI), squashed: lower case, no "_"
ATTR_WORDS = {"bool": "BOOL", "int": "INT", "float": "FLOAT", "str": "STRING", "string": "STRING",
              "type": "DATA_TYPE", "datatype": "DATA_TYPE", "dtype": "DATA_TYPE",
              "listbool": "LIST_BOOL", "listint": "LIST_INT", "listfloat": "LIST_FLOAT", "liststr": "LIST_STRING",
              "liststring": "LIST_STRING", "listtype": "LIST_DATA_TYPE", "listdatatype": "LIST_DATA_TYPE",
              "listlistint": "LIST_LIST_INT", "listlistfloat": "LIST_LIST_FLOAT", "namedattrs": "NAMED_ATTRS"}
EXAMPLE = "ops:\n  MyOp:\n    inputs: [x, y]\n    outputs: [z]\n    attrs: {alpha: float}"


def attr_type(word: Any, where: str, file: str, line: int | None = None) -> str:
    """``VT_*`` for an attribute type as written (``float``, ``list_int``, ``listInt``, ``VT_FLOAT``)."""
    text = str(word).strip()
    if text.upper().removeprefix("VT_") in VT:
        return "VT_" + text.upper().removeprefix("VT_")
    found = ATTR_WORDS.get(text.lower().replace("_", ""))
    if found is None:
        raise SpecError(f"{where}: unknown attribute type {word!r}", file=file, line=line,
                        hint="types: " + ", ".join(sorted({k for k in ATTR_WORDS if "_" not in k})))
    return "VT_" + found


def _entries(value: Any, kinds: tuple[str, ...], what: str, where: str, file: str, line: int | None) -> Pairs:
    """``[x, {bias: optional}]`` -> ``[("x", "required"), ("bias", "optional")]``."""
    if not isinstance(value, list):
        raise SpecError(f"{where}: `{what}` must be a list of names", file=file, line=line, hint=EXAMPLE)
    out: Pairs = []
    for item in value:
        if isinstance(item, str):
            out.append((item, "required"))
        elif isinstance(item, dict) and len(item) == 1:
            ((name, kind),) = item.items()
            if kind not in kinds:
                raise SpecError(f"{where}: {what} `{name}` is {kind!r}", file=file, line=line,
                                hint=f"{what} are one of: {', '.join(kinds)}")
            out.append((str(name), str(kind)))
        else:
            raise SpecError(f"{where}: {what} entry {item!r} is not a name or {{name: kind}}", file=file, line=line,
                            hint=EXAMPLE)
    return out


def _line(text: str, key: str) -> int | None:
    m = re.search(rf"^\s*{re.escape(key)}\s*:", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _text(path: Path) -> str:
    """A declaration file's text: a regular file within the pass files' limit (a FIFO never blocks)."""
    raw = read_regular(path, PASS_FILE_BYTES, error=SpecError, what="Ascend IR declaration",
                       hint="declarations are a few KB; CANN's own op definitions a few MB")
    return raw.decode("utf-8")


def read_yaml(path: Path, within: tuple[Path, ...] = ()) -> dict[str, IrDef]:
    file = str(path)
    text = _text(path)
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise SpecError(f"invalid YAML: {getattr(e, 'problem', e)}", file=file,
                        line=mark.line + 1 if mark else None, hint=EXAMPLE) from e
    if not isinstance(data, dict) or set(data) - {"ops", "include"}:
        raise SpecError("an Ascend IR declaration has the keys `ops` and `include`", file=file, line=1, hint=EXAMPLE)
    ops = data.get("ops") or {}
    if not isinstance(ops, dict):
        raise SpecError("`ops` must map op types to their IR", file=file, line=_line(text, "ops"), hint=EXAMPLE)
    found: dict[str, IrDef] = {}
    for include in data.get("include") or []:
        found.update(read_declarations(path.parent / str(include), within))
    for op, spec in ops.items():
        line = _line(text, str(op))
        where = f"op {op}"
        if not isinstance(spec, dict) or set(spec) - {"inputs", "outputs", "attrs"}:
            raise SpecError(f"{where}: give `inputs`, `outputs` and `attrs`", file=file, line=line, hint=EXAMPLE)
        attrs = spec.get("attrs") or {}
        if not isinstance(attrs, dict):
            raise SpecError(f"{where}: `attrs` maps attribute names to types", file=file, line=line, hint=EXAMPLE)
        found[str(op)] = IrDef(
            _entries(spec.get("inputs") or [], INPUT_KINDS, "inputs", where, file, line),
            _entries(spec.get("outputs") or [], OUTPUT_KINDS, "outputs", where, file, line),
            [(str(k), attr_type(v, where, file, line)) for k, v in attrs.items()], source=f"{file}:{line}")
    return found


def _param(value: Any, kinds: tuple[str, ...], where: str, file: str) -> str:
    kind = str(value or "required").lower()
    if kind not in kinds:
        raise SpecError(f"{where}: param type {value!r}", file=file, hint=f"one of: {', '.join(kinds)}")
    return kind


def read_op_json(path: Path) -> dict[str, IrDef]:
    """msopgen's op definition JSON: a list of ``{"op", "input_desc", "output_desc", "attr"}``."""
    file = str(path)
    try:
        data = json.loads(_text(path))
    except json.JSONDecodeError as e:
        raise SpecError(f"invalid JSON: {e.msg}", file=file, line=e.lineno, column=e.colno) from e
    if isinstance(data, dict):
        data = [data]
    found: dict[str, IrDef] = {}
    for entry in data if isinstance(data, list) else []:
        if not isinstance(entry, dict) or "op" not in entry:
            raise SpecError("expected op definitions: [{\"op\": ..., \"input_desc\": [...], ...}]", file=file)
        op = str(entry["op"])
        found[op] = IrDef(
            [(str(d["name"]), _param(d.get("param_type"), INPUT_KINDS, f"op {op}", file))
             for d in entry.get("input_desc") or []],
            [(str(d["name"]), _param(d.get("param_type"), OUTPUT_KINDS, f"op {op}", file))
             for d in entry.get("output_desc") or []],
            [(str(d["name"]), attr_type(d.get("type"), f"op {op}", file)) for d in entry.get("attr") or []],
            source=file)
    return found


def read_op_ini(path: Path) -> dict[str, IrDef]:
    """CANN's op info INI: ``[Op]`` sections with ``inputN.name``/``.paramType``, ``outputN.*``,
    ``attr.list`` and ``attr_<name>.type``."""
    file = str(path)
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive (paramType)
    try:
        parser.read_string(_text(path), source=file)
    except configparser.Error as e:
        raise SpecError(f"invalid INI: {e}", file=file) from e
    found: dict[str, IrDef] = {}
    for op in parser.sections():
        sec = parser[op]

        def numbered(prefix: str, kinds: tuple[str, ...], sec: Any = sec, op: str = op) -> Pairs:
            idx = sorted({int(m.group(1)) for k in sec if (m := re.fullmatch(rf"{prefix}(\d+)\.name", k))})
            return [(sec[f"{prefix}{i}.name"], _param(sec.get(f"{prefix}{i}.paramType"), kinds, f"op {op}", file))
                    for i in idx]

        names = [n.strip() for n in sec.get("attr.list", "").split(",") if n.strip()]
        attrs = [(n, attr_type(sec.get(f"attr_{n}.type", "str"), f"op {op}", file)) for n in names]
        found[op] = IrDef(numbered("input", INPUT_KINDS), numbered("output", OUTPUT_KINDS), attrs, source=file)
    return found


def read_declarations(path: Path, within: tuple[Path, ...] = ()) -> dict[str, IrDef]:
    """The ops a declaration file declares (format by extension: .yaml/.yml, .json, .ini); ``within``: the
    YAML files whose ``include`` led here (a file that includes itself, directly or not, is an error)."""
    if path.resolve() in within:
        chain = " -> ".join(p.name for p in (*within, path.resolve()))
        raise SpecError(f"the declarations include themselves ({chain})", file=str(within[-1]),
                        hint="remove the `include` that leads back")
    if not path.is_file():
        raise SpecError("Ascend IR declaration file not found", file=str(path),
                        hint="`include` paths are relative to the YAML file that names them")
    readers = {".yaml": read_yaml, ".yml": read_yaml, ".json": read_op_json, ".ini": read_op_ini}
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise SpecError(f"cannot read Ascend IR from a {path.suffix or 'extensionless'} file", file=str(path),
                        hint="declarations are .yaml (airctl's), .json (msopgen) or .ini (CANN op info)")
    try:
        return read_yaml(path, (*within, path.resolve())) if reader is read_yaml else reader(path)
    except (KeyError, TypeError, ValueError, UnicodeDecodeError, RecursionError) as e:
        raise SpecError(f"malformed Ascend IR declaration: {type(e).__name__}: {e}", file=str(path),
                        hint=EXAMPLE) from e


def declaration_files(model_path: Path) -> list[Path]:
    """The declaration files sim reads for a model script: the first of ``DECLARATION_NAMES`` found
    beside it (``{stem}`` is the script's name without ``.py``)."""
    folder = model_path.parent
    for pattern in DECLARATION_NAMES:
        path = folder / pattern.format(stem=model_path.stem)
        if path.is_file():
            return [path]
    return []


def find_declarations(model_path: Path | str) -> AscendIr:
    """The IR table for a model script, from the declaration file beside it (if any)."""
    table = AscendIr()
    for path in declaration_files(Path(model_path)):
        table.declared.update(read_declarations(path))
        table.files.append(str(path))
    return table
