"""The Ascend IR of users' custom ops under sim: what CANN's op registry would answer on an NPU.

``torchair.ge.custom_op`` and TorchAir's auto-generated converters ask CANN whether an Ascend IR
op type is registered, and with which inputs, outputs and attributes
(``torchair.core._torchair.get_registered_ir_def``). Without CANN, sim answers from an
:class:`AscendIr` table that comes with the session (``SimContext.ascend_ir``), filled from:

1. **declarations** next to the model (:func:`airctl.sim.ascend_ir_files.find_declarations`, with
   their formats): ``<model>.ascend_ir.yaml`` or ``ascend_ir.yaml``, which may
   ``include`` CANN's own op definitions (msopgen JSON, op-info INI);
2. **the converter's own call**: ``custom_op("ScaledAdd", inputs={...}, outputs=[...], attrs={...})``
   names every input, output and attribute, and TorchAir then ignores the registry's lists, so an
   undeclared op called that way is answered from the call (and recorded in :attr:`AscendIr.assumed`:
   on an NPU the op must still be installed).

Anything else is answered ``"ERROR"`` ("not registered"), as a CANN without the op would, and
recorded in :attr:`AscendIr.missing`; :func:`missing_hint` says how to declare it.

>>> ir = AscendIr({"ScaledAdd": IrDef([("x", "required")], [("z", "required")], [("alpha", "VT_FLOAT")])})
>>> ir.lookup("ScaledAdd")
('SUCCESS', [('x', 'required')], [('z', 'required')], [('alpha', 'VT_FLOAT')])
>>> ir.lookup("Nope")[0], ir.missing
('ERROR', ['Nope'])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Pairs = list[tuple[str, str]]
IrAnswer = tuple[str, Pairs, Pairs, Pairs]
DECLARATION_NAMES = ("{stem}.ascend_ir.yaml", "{stem}.ascend_ir.yml", "ascend_ir.yaml", "ascend_ir.yml")
# torchair.ge.attr classes -> the attribute value types CANN's registry names
ATTR_CLASSES = {"Bool": "VT_BOOL", "DataType": "VT_DATA_TYPE", "Float": "VT_FLOAT", "Int": "VT_INT",
                "Str": "VT_STRING", "ListBool": "VT_LIST_BOOL", "ListDataType": "VT_LIST_DATA_TYPE",
                "ListFloat": "VT_LIST_FLOAT", "ListInt": "VT_LIST_INT", "ListStr": "VT_LIST_STRING",
                "ListListFloat": "VT_LIST_LIST_FLOAT", "ListListInt": "VT_LIST_LIST_INT"}


@dataclass
class IrDef:
    """One op type's IR: ``[(input, required|optional|dynamic)]``, ``[(output, required|dynamic)]``,
    ``[(attr, VT_*)]``, in order; ``source`` says where it was declared."""

    inputs: Pairs
    outputs: Pairs
    attrs: Pairs
    source: str = ""

    def answer(self) -> IrAnswer:
        return "SUCCESS", list(self.inputs), list(self.outputs), list(self.attrs)


def from_keyword_call(inputs: Mapping[str, Any] | None, outputs: Sequence[Any] | None,
                      attrs: Mapping[str, Any] | None) -> IrDef:
    """The IR a keyword-form ``custom_op`` call describes (None input: optional; list: dynamic;
    ``(name, count)`` output: dynamic; attribute types from their ``torchair.ge.attr`` class)."""
    # arguments of the wrong kind (an int for inputs) describe nothing: TorchAir's own validation,
    # which runs once the registry has answered, says what is wrong with them
    inputs = inputs if isinstance(inputs, Mapping) else {}
    attrs = attrs if isinstance(attrs, Mapping) else {}
    outputs = outputs if isinstance(outputs, (list, tuple)) else []
    ins = [(name, "optional" if v is None else "dynamic" if isinstance(v, (list, tuple)) else "required")
           for name, v in inputs.items()]
    outs = [(o[0], "dynamic") if isinstance(o, (list, tuple)) and o else (str(o), "required") for o in outputs]
    ats = [(name, ATTR_CLASSES.get(type(v).__name__, "VT_STRING")) for name, v in attrs.items()]
    return IrDef(ins, outs, ats, source="the converter's keyword call to torchair.ge.custom_op")


@dataclass
class AscendIr:
    """A session's IR registry: declared ops, and what was asked and how it was answered."""

    declared: dict[str, IrDef] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # the declaration files read
    assumed: list[str] = field(default_factory=list)  # answered from a keyword-form custom_op call
    missing: list[str] = field(default_factory=list)  # answered "ERROR"
    _calls: dict[str, IrDef] = field(default_factory=dict)  # keyword-form custom_op calls in progress

    def lookup(self, op_type: str) -> IrAnswer:
        """What ``get_registered_ir_def(op_type)`` returns under sim."""
        found = self.declared.get(op_type)
        if found is not None:
            return found.answer()
        call = self._calls.get(op_type)
        if call is not None:
            if op_type not in self.assumed:
                self.assumed.append(op_type)
            return call.answer()
        if op_type not in self.missing:
            self.missing.append(op_type)
        return "ERROR", [], [], []

    @contextmanager
    def keyword_call(self, op_type: str, inputs: Any, outputs: Any, attrs: Any) -> Iterator[None]:
        """While a keyword-form ``custom_op(op_type, ...)`` runs, an undeclared ``op_type`` is answered
        from the call itself."""
        previous = self._calls.get(op_type)
        self._calls[op_type] = from_keyword_call(inputs, outputs, attrs)
        try:
            yield
        finally:
            if previous is None:
                self._calls.pop(op_type, None)
            else:
                self._calls[op_type] = previous


# torch_npu's own ops whose IR TorchAir's converters never ask for: no user declaration helps them
TORCH_NPU_OPS = {"NpuFusionAttentionV3": (
    "npu_fusion_attention_v3 is what torch_npu's SDPA kernel calls on Atlas A2/A3, and this TorchAir has no "
    "converter for it (as on a real A2/A3 with this torch-npu); under sim choose the Ascend950 kernel "
    "(AIRCTL_SIM_SOC=Ascend950, the default) or compile with --mode reduce-overhead")}


SCHEMA_ATTRS = {"float": "float", "int": "int", "SymInt": "int", "bool": "bool", "str": "str",
                "ScalarType": "data_type", "int[]": "list_int", "SymInt[]": "list_int", "float[]": "list_float",
                "bool[]": "list_bool", "str[]": "list_str"}


def _schema_type(kind: str) -> str:
    """``Optional[List[int]]`` (how torch prints a schema type) -> ``int[]``."""
    import re

    kind = re.sub(r"^Optional\[(.*)\]$", r"\1", kind.rstrip("?"))
    return re.sub(r"^List\[(.*)\]$", r"\1[]", kind)


def example_from_schema(op: Any) -> str:
    """A declaration to start from, read off the torch schema (check it against your Ascend C op):
    Tensor arguments are inputs, others attributes, returns (and mutated inputs) outputs."""
    ins, attrs, outs = [], [], []
    for arg in op._schema.arguments:
        kind = str(arg.type)
        if "Tensor" in kind:
            wrapped = "dynamic" if "List" in kind else "optional"
            ins.append(arg.name if kind == "Tensor" else f"{{{arg.name}: {wrapped}}}")
            if arg.alias_info is not None and arg.alias_info.is_write:
                outs.append(arg.name)
        else:
            attrs.append(f"{arg.name}: {SCHEMA_ATTRS.get(_schema_type(kind), 'str')}")
    returns = op._schema.returns
    outs += [r.name or ("out" if len(returns) == 1 else f"out{i}") for i, r in enumerate(returns)]
    text = f"      inputs: [{', '.join(ins)}]\n      outputs: [{', '.join(outs)}]\n"
    return text + (f"      attrs: {{{', '.join(attrs)}}}\n" if attrs else "")


def missing_hint(message: str, model_path: Path | str | None) -> str | None:
    """How to declare the op a "No AscendIR X was found to be registered" error names (None: no such
    error): the file, the format, and an example read off the torch op's schema when the message
    names the FX node's target."""
    import re

    from airctl.verify.converter_coverage import resolve_target

    m = re.search(r"No AscendIR (\S+) was found to be registered", message)
    if m is None:
        return None
    op = m.group(1)
    if op in TORCH_NPU_OPS:
        return TORCH_NPU_OPS[op]
    model = Path(model_path) if model_path else Path("model.py")
    where = model.parent / f"{model.stem}.ascend_ir.yaml"
    named = re.search(r"target=torch\.ops\.(\w+\.\w+\.\w+)", message)  # the OpOverload the FX node calls
    target = resolve_target(named.group(1)) if named else None
    body = (example_from_schema(target) if target is not None
            else "      inputs: [x, y]        # in order; {bias: optional}, {xs: dynamic}\n      outputs: [z]\n"
                 "      attrs: {alpha: float}\n")
    return (f"under sim, CANN's op registry is a file: declare {op}'s Ascend IR in {where} (or ascend_ir.yaml "
            f"beside the model), e.g.\n  ops:\n    {op}:\n{body}"
            "or list your CANN op definitions there (`include: [op.json, ops-info.ini]`); a converter that calls "
            f"torchair.ge.custom_op({op!r}, inputs=..., outputs=..., attrs=...) needs no declaration (docs/sim.md)")
