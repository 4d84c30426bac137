"""Which of TorchAir's own passes can be switched off, and how (``airctl bisect``, both backends).

TorchAir runs its FX passes through ``GraphTransformObserver.apply_gm_pass`` and its GE passes
through ``apply_gegraph_pass``; :mod:`.graph_transform_observer` hands each call to the
capture listener, which runs the pass — or, for a pass switched off, returns without running it.
That is safe where TorchAir ignores what the pass returns. Three GE passes return what conversion
goes on to use (the graph's inputs, the reference-data indices, the output-to-input mapping):
those are never skipped. The aclgraph passes of reduce-overhead are not routed through the
observer (TorchAir only dumps their result), so the only ones that can be switched off are those
TorchAir's config turns off itself; the rest always run.

>>> switch("view_to_reshape").how, switch("remove_cat_ops").config
('observer', ('debug.aclgraph.remove_cat_ops', False))
>>> switch("apply_event_record").why_not
'TorchAir runs it unconditionally when it generates aclgraph code (no switch)'
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

FX, GE = "torchair-fx", "torchair-ge"
HOOKS = ("post_grad_custom_pre_pass", "post_grad_custom_post_pass")  # the YAML passes' hooks, not TorchAir's


@dataclass(frozen=True)
class Switch:
    name: str
    kind: str  # torchair-fx | torchair-ge
    how: str | None  # "observer" (not run), "config" (TorchAir's own option), None: cannot be switched off
    config: tuple[str, Any] | None = None  # (dotted CompilerConfig option, value that turns it off)
    why_not: str | None = None

    @property
    def can_skip(self) -> bool:
        return self.how is not None

    def to_json(self) -> dict[str, Any]:
        return {"pass": self.name, "kind": self.kind, "how": self.how, "why_not": self.why_not}


_NEEDED = "conversion uses what it returns"
_ACL_ALWAYS = "TorchAir runs it unconditionally when it generates aclgraph code (no switch)"
KNOWN: dict[str, Switch] = {s.name: s for s in (
    Switch("remove_dead_data_and_reorder_data_index", GE, None, why_not=f"{_NEEDED}: the graph's input list"),
    Switch("optimize_reference_op_redundant_copy", GE, None, why_not=f"{_NEEDED}: the reference-data indices"),
    Switch("mapping_assign_op_to_graph_output", GE, None, why_not=f"{_NEEDED}: the output-to-input mapping"),
    Switch("remove_cat_ops", FX, "config", ("debug.aclgraph.remove_cat_ops", False)),
    Switch("reinplace_inplaceable_ops_pass", FX, "config",
           ("debug.aclgraph.disable_reinplace_inplaceable_ops_pass", True)),
    Switch("reinplace_input_mutated_ops", FX, "config",
           ("debug.aclgraph.disable_reinplace_input_mutated_ops_pass", True)),
    Switch("decompose_auto_functionalized", FX, None,
           why_not="TorchAir runs it with reinplace_input_mutated_ops: switch that one off instead"),
    *(Switch(name, FX, None, why_not=_ACL_ALWAYS) for name in (
        "apply_event_closure_with_multi_stream", "apply_event_record", "eliminate_dead_code",
        "replace_dynamic_workspace_ops", "replace_core_limit_nodes", "resolve_default_stream_markers")),
)}


def switch(name: str, dialect: str = "fx") -> Switch:
    """How TorchAir pass ``name`` (an FX pass, or a GE pass for ``dialect="ge"``) is switched off."""
    known = KNOWN.get(name)
    if known is not None:
        return known
    if name in HOOKS:
        return Switch(name, FX, None, why_not="the hook that runs the YAML passes (bisected on their own)")
    return Switch(name, GE if dialect == "ge" else FX, "observer")


def skipped_by_observer(name: str, off: Iterable[str]) -> bool:
    """Should the observer leave pass ``name`` out (it is switched off and the observer is how)?"""
    return name in set(off) and switch(name).how == "observer"


def configure(config: Any, off: Iterable[str]) -> list[str]:
    """Set TorchAir's own options that switch off the passes in ``off`` that have one; returns them."""
    done = []
    for name in off:
        s = KNOWN.get(name)
        if s is None or s.config is None:
            continue
        path, value = s.config
        *parents, leaf = path.split(".")
        setattr(functools.reduce(getattr, parents, config), leaf, value)
        done.append(name)
    return done
