"""The catalogue of verifier rules: id, TorchAir rule, per-mode severity, and the fix hint.

One table so the checks, ``docs/checks.md`` and ``airctl check`` agree on ids and wording.
Severity is per mode because the two back-ends differ (reference/torchair.md §2.1, §2.2):
``None`` means the rule does not apply in that mode. Checks create findings only through
:func:`make_finding`, which fills severity, reference and hint from here.

Each rule also says which artifacts can show it (``seen_in``, the words of :data:`airctl.verify.rule.ARTIFACTS`), so a
user holding only what an NPU machine left knows what ``airctl check`` can find in it:
``fx`` any FX graph (a ledger stage, a TORCH_COMPILE_DEBUG stage file, print_readable code),
``listing`` a ``graph():`` listing or the DEBUG log that holds it, ``log`` the DEBUG log's other
lines, ``ge-dump`` a GE dump (pbtxt/txt; the ``py`` dump has no attributes and no control
edges), ``pass-runner`` a pass airctl ran itself (``airctl compile``/``run``/``passes``).
"""

from __future__ import annotations

from airctl.graph.model import Graph
from airctl.modes import Mode
from airctl.verify.capture_catalogue import CAPTURE_RULES
from airctl.verify.findings import Finding
from airctl.verify.rule import FX_ARTIFACTS, Rule

_RULES = (
    Rule("unbalanced_scope", "R1/R2", "scope_enter/scope_exit do not pair up in node order",
         "error", "error", ("fx",),
         "every air.scope_enter needs a matching air.scope_exit later in node order (LIFO); TorchAir rejects "
         "the graph otherwise. Check the pass that inserted them, or a graph break inside a `with` scope",
         seen_in=FX_ARTIFACTS,
         seen_how="TorchAir refuses the graph, so there is no GE dump; the log ends with its RuntimeError"),
    Rule("scope_args_not_lists", "R5", "scope_enter keys/values are not two lists of equal length",
         "error", "error", ("fx", "ge"),
         "call scope_enter(['_user_stream_label'], ['stream_1']): strings are zipped character by character "
         "and unequal lists are truncated, silently",
         seen_in=(*FX_ARTIFACTS, "ge-dump"),
         seen_how="GE dump: ops carry one-letter attributes (`_`, `u`, `s`, ...) and no `_user_stream_label` "
                  "(strings zipped character by character); a one-letter stream label when only the values were "
                  "a string"),
    Rule("stream_label_not_first", "R6", "_user_stream_label is not the first scope_enter key",
         "info", "error", ("fx",),
         "put '_user_stream_label' first: aclgraph takes values[0] as the stream label",
         seen_in=FX_ARTIFACTS,
         seen_how="GE does not care about key order, so a GE dump cannot show it"),
    Rule("nested_stream_scopes", "R10", "a stream scope opened inside another stream scope",
         "warning", "warning", ("fx",),
         "close the outer stream scope first: GE ops take the inner label while record/wait bookkeeping "
         "uses the outer one, and aclgraph nests stream contexts",
         seen_in=FX_ARTIFACTS,
         seen_how="GE dump: only the inner label survives on the ops; the log shows two `ScopeAttrs push attrs` "
                  "without a pop between"),
    Rule("record_before_any_op", "R7", "record with no earlier op on its stream: GE drops the dependency",
         "error", None, ("fx",),
         "insert the record after the last op it should cover, inside the same stream scope",
         seen_in=(*FX_ARTIFACTS, "log"),
         seen_how="GE dump: the control edge is simply missing; the log shows `npu:no_op_before_record`"),
    Rule("wait_dropped_at_tail", "R8", "wait with no later op on its stream: GE drops the dependency",
         "error", None, ("fx",),
         "insert the wait right before the op that consumes the other stream's result",
         seen_in=(*FX_ARTIFACTS, "log"),
         seen_how="GE dump: the control edge is simply missing; the log shows `push control edges` with no "
                  "`Add record-wait generated control edges` after it"),
    Rule("wait_on_const", "R8", "the wait's control edge lands on a helper Const, not on compute",
         "warning", None, ("fx", "ge"),
         "move the wait before a node whose converter starts with a compute op (no scalar/list literal args), "
         "or wait directly before the consumer of the other stream's tensor",
         seen_in=(*FX_ARTIFACTS, "ge-dump"),
         seen_how="GE dump: a `Const` with a control input (`^Abs` / `Abs:-1`)",
         mode_hints=((Mode.MAX_AUTOTUNE,
                      "GE already orders the consumer's data edge from the other stream, so the wait matters only for "
                      "orderings without one: put it before the first op that needs that order and has no scalar/list "
                      "literal arguments. If this pass file also runs in reduce-overhead, keep a wait before the "
                      "consumer of the other stream's tensor too: there nothing else orders it, and moving the wait "
                      "away leaves a race"),)),
    Rule("wait_on_unknown_record", "R9", "wait on something that is not a known record or tensor",
         "error", "error", ("fx", "ge"),
         "pass wait([record_node]) with records created by air.record in the same graph; other arguments are "
         "ignored silently",
         seen_in=(*FX_ARTIFACTS, "ge-dump"),
         seen_how="GE dump: a control input naming an op that is not in the graph"),
    Rule("race_cross_stream_without_wait", None, "cross-stream use with no happens-before ordering",
         "error", "error", ("fx",),
         "record on the producing stream after the producer and wait on the consuming stream before the use",
         seen_in=FX_ARTIFACTS),
    Rule("stream_not_joined", None, "side-stream work not ordered before the graph output",
         "warning", "error", ("fx", "ge"),
         "make the graph output depend on the side-stream work (record after it, wait before the output), "
         "or keep the work on the default stream",
         seen_in=(*FX_ARTIFACTS, "ge-dump"),
         seen_how="GE dump: side-stream ops with no data or control path to NetOutput"),
    Rule("deadlock_cycle", None, "record/wait and stream order form a cycle",
         "error", "error", ("fx", "ge"),
         "each wait must refer to a record that can complete without the waiting stream; reorder the nodes",
         seen_in=(*FX_ARTIFACTS, "ge-dump"),
         seen_how="GE dump: a cycle of data and control edges"),
    Rule("pass_returned_new_graph", "R11", "a custom pass returned a graph instead of mutating gm in place",
         "error", "error", ("fx",),
         "mutate gm.graph in place and return None; TorchAir ignores the return value",
         seen_in=("pass-runner", "log"),
         seen_how="DEBUG log: the custom pass's before and after listings are equal (a warning: a pass with "
                  "nothing to do looks the same)"),
    Rule("mode_unsupported_api", "R12", "an op that the selected mode cannot run",
         "error", "error", ("fx",),
         "npu_wait_tensor and fused-infer-attention ops are max-autotune only; tagged events and native "
         "torch.npu.Stream/Event are reduce-overhead only: use record/wait, which work in both",
         seen_in=FX_ARTIFACTS),
    Rule("scope_value_invalid", None, "a scope attribute value TorchAir or GE reads differently than intended",
         "warning", "warning", ("fx", "ge"),
         "give _user_stream_priority a decimal integer string ('0'), and _enable_inner_parallel / "
         "_op_exec_never_timeout exactly 'True' or 'False': TorchAir writes value == 'True' as a bool, so 'true' "
         "or '1' turn the switch off",
         seen_in=(*FX_ARTIFACTS, "ge-dump"),
         seen_how="GE dump: `_user_stream_priority` that is not a number (s: \"high\"); a switch that reads "
                  "b: false"),
    Rule("foreign_stream_ops", None, "stream ops of a namespace the mode's compiler does not read",
         "error", "error", ("fx",),
         "npugraph_ex reads only torch.ops.npugraph_ex.* stream ops (what it makes of torch.npu.Stream/Event, or "
         "torch.ops.npugraph_ex.scope_enter/record/wait in a custom pass), TorchAir's modes only torch.ops.air.* "
         "(torchair.scope, torchair.ops): use the mode's own ops, or let a pass file insert them (airctl picks the "
         "namespace by mode)",
         seen_in=FX_ARTIFACTS,
         seen_how="the compile does not fail: npugraph_ex inserts no closure events for the scope and its code "
                  "has no `with torch.npu.stream(...)` for it (GE in max-autotune has no converter and fails)"),
    Rule("similar_stream_labels", None, "stream labels that differ only by case, '_' or '-' (a typo splits a stream)",
         "info", "info", ("fx", "ge"),
         "use one spelling for each stream label: every distinct label is a separate stream",
         seen_in=(*FX_ARTIFACTS, "ge-dump")),
)

RULES: dict[str, Rule] = {r.id: r for r in _RULES}
# off by default: `airctl check --max-memory-increase LIMIT` computes it (airctl/pipeline/check_memory.py)
RULES["memory_increase"] = Rule(
    "memory_increase", None, "the stream plan raises the predicted device memory peak beyond the limit",
    "error", "error", ("fx", "ge"),
    "wait for the cross-stream reads sooner (a `wait` right after the reader, on the producer's stream), or move "
    "less to side streams: `airctl passes suggest --memory-budget` finds the fastest plan within a budget",
    seen_in=("pass-runner",))

RULES.update({r.id: r for r in CAPTURE_RULES})


def make_finding(rule_id: str, mode: Mode, message: str, nodes: list[str], graph: Graph | None = None, *,
                 severity: str | None = None, hint: str | None = None) -> Finding | None:
    """A finding for ``rule_id``, or None when the rule does not apply in ``mode``."""
    rule = RULES[rule_id]
    sev = severity or rule.severity(mode)
    if sev is None:
        return None
    source = None
    if graph is not None:
        for name in nodes:
            node = graph.get(name)
            if node is not None and node.source:
                source = node.source
                break
        origin, listed = graph.attrs.get("origin"), None
        if source is None and isinstance(origin, str):  # a listing: where the node is listed in its file
            listed = next((graph.node(n).meta.get("line") for n in nodes if n in graph), None)
            source = f"{origin}:{listed}" if isinstance(listed, int) else None
    return Finding(rule=rule_id, severity=sev, mode=mode, message=message, nodes=list(nodes), source=source,
                   hint=hint or rule.hint_for(mode), ref=rule.ref)
