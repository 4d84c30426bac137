"""Structural checks on an FX stream plan: scope pairing and arguments, record/wait placement.

These are the silent failures of reference/torchair.md §2.3 that a single walk over node order
can see (R1/R2, R5, R6, R7, R8, R9, R10, R12). Ordering problems between streams live in
:mod:`airctl.verify.happens_before` and :mod:`airctl.verify.cycles`.
"""

from __future__ import annotations

from typing import Any

from airctl.graph.model import STREAM_LABEL, is_stream_op, stream_word
from airctl.graph.roles import Role
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.plan import FxPlan, emits_ge_op, node_args, ref_name, scope_keys_values
from airctl.verify.rules import make_finding
from airctl.verify.scope_values import PRIORITY_KEY, SWITCH_KEYS, priority_problem, switch_problem

# R12: ops one mode cannot run (converter raises in GE; eager kernel raises in aclgraph)
GE_UNSUPPORTED = frozenset({
    "tagged_event_record", "tagged_event_wait", "tagged_event_record_on_stream", "tagged_event_wait_on_stream",
    "tagged_stream_wait_stream", "record_tagged_stream", "record_tagged_stream_",
})
ACL_UNSUPPORTED = frozenset({"wait_tensor", "npu_fused_infer_attention_score", "npu_fused_infer_attention_score_v2"})
_NON_CONST_KWARGS = frozenset({"dtype", "layout", "device", "pin_memory", "memory_format", "non_blocking"})
_OP, _RECORD, _WAIT = Role.OP, Role.RECORD, Role.WAIT
_ENTER, _EXIT = Role.SCOPE_ENTER, Role.SCOPE_EXIT
_GETITEM = ("getitem", "_operator.getitem")  # ops that make no GE op (plan.emits_ge_op)


class FxStructure:
    """Runs the structural checks; also tells the happens-before pass which records GE drops."""

    def __init__(self, plan: FxPlan) -> None:
        self.plan = plan
        self.mode = plan.mode
        self.findings: list[Finding] = []
        self.dropped_records: set[str] = set()  # R7: GE turns these into 'no_op_before_record'

    def _add(self, rule: str, message: str, nodes: list[str], **kw: Any) -> None:
        f = make_finding(rule, self.mode, message, nodes, self.plan.graph, **kw)
        if f is not None:
            self.findings.append(f)

    def run(self) -> list[Finding]:
        self._scopes()
        self._records_and_waits()
        self._mode_api()
        return self.findings

    # -- R1/R2, R5, R6, R10 ----------------------------------------------------------------------
    def _scopes(self) -> None:
        plan, nodes = self.plan, self.plan.nodes
        for i in plan.unmatched_exits:
            self._add("unbalanced_scope", f"{nodes[i].name} closes a scope that was never opened (R1)",
                      [nodes[i].name])
        for scope in plan.unclosed:
            self._add("unbalanced_scope", f"{nodes[scope.enter].name} is never closed by a scope_exit (R2)",
                      [nodes[scope.enter].name])
        said_of: dict[tuple, list[tuple[str, str]]] = {}  # a graph repeats a few scope arguments many times
        for scope in plan.scopes:
            enter = nodes[scope.enter]
            keys, values = scope_keys_values(enter)
            try:
                said = said_of.get((*keys, None, *values)) if type(keys) is list and type(values) is list else None
            except TypeError:  # an unhashable item: said afresh
                said = None
            if said is None:
                said = _scope_args_said(keys, values)
                if type(keys) is list and type(values) is list and not (said and said[0][0] == _NOT_LISTS):
                    said_of[(*keys, None, *values)] = said  # (strings only, once checked: hashable)
            for rule, text in said:
                self._add(rule, f"{enter.name}: {text}", [enter.name])
            if said and said[0][0] == _NOT_LISTS:
                continue
            if scope.label is not None and scope.parent_stream is not None:
                end = scope.exit if scope.exit is not None else len(nodes)
                sync = [nodes[j].name for j in range(scope.enter, end) if plan.roles[j] in (Role.RECORD, Role.WAIT)]
                severity = "error" if sync and self.mode.is_ge else None
                extra = (f"; GE files {', '.join(sync[:3])} under the outer stream {scope.parent_stream!r}"
                         if sync and self.mode.is_ge else "")
                self._add("nested_stream_scopes",
                          f"{enter.name} opens stream {scope.label!r} inside stream {scope.parent_stream!r}{extra}",
                          [enter.name, *sync[:3]] if extra else [enter.name], severity=severity)

    # -- R7, R8, R9 ------------------------------------------------------------------------------
    def _records_and_waits(self) -> None:
        nodes, roles, outer = self.plan.nodes, self.plan.roles, self.plan.outer
        lanes_with_ops: set[str | None] = set()
        pending: dict[str | None, list[str]] = {}
        getitem = not self.plan.ops.isdisjoint(_GETITEM)  # else no op node needs its op read
        # GE files ops, records and waits under the outermost label: a node's lane is outer[i]
        for i, role, lane in zip(range(len(roles)), roles, outer, strict=True):
            if role is _OP:  # the common case first (emits_ge_op without its call)
                if getitem and nodes[i].op in _GETITEM:
                    continue
            elif role is _RECORD:
                if lane not in lanes_with_ops:
                    node = nodes[i]
                    self.dropped_records.add(node.name)
                    self._add("record_before_any_op",
                              f"{node.name} is the first thing on {stream_word(lane)}: GE records "
                              f"'no_op_before_record' and every wait on it is dropped (R7)", [node.name])
                continue
            elif role is _WAIT:
                self._check_wait_args(i)
                pending.setdefault(lane, []).append(nodes[i].name)
                continue
            elif role is _ENTER or role is _EXIT or not emits_ge_op(nodes[i], role):
                continue  # (scope markers first: no call for them)
            lanes_with_ops.add(lane)
            if pending:
                waits = pending.pop(lane, None)
                node = nodes[i]
                if waits and _likely_starts_with_const(node) and not self._data_edge_orders(waits, node):
                    self._add("wait_on_const",
                              f"the control edge of {', '.join(waits)} lands on the first GE op of {node.name} "
                              f"({node.op}), which is likely a helper Const for its literal arguments (R8)",
                              [*waits, node.name])
        if not self.mode.is_ge:
            return
        for lane, waits in pending.items():
            for w in waits:
                self._add("wait_dropped_at_tail",
                          f"{w} has no later op on {stream_word(lane)}: GE has nothing to attach its control edge "
                          f"to (R8)", [w])

    def _data_edge_orders(self, waits: list[str], node: Any) -> bool:
        """Whether ``node`` reads a value produced on the stream of every record the waits wait on: GE
        synchronises that cross-stream data edge itself, so a control edge lost on a helper Const
        loses nothing for it (a module-selected wait before a view: no R8 alarm)."""
        plan = self.plan
        at = plan.index  # name -> position (a name's last node)
        lanes = {plan.outer[at[n]] for n in node.inputs if n in at}
        for w in waits:
            args = node_args(plan.nodes[at[w]])
            items = args[0] if args and isinstance(args[0], (list, tuple)) else []
            records = [r for r in (ref_name(item) for item in items) if r in at]
            if not records or any(plan.outer[at[r]] not in lanes for r in records):
                return False
        return True

    def _check_wait_args(self, i: int) -> None:
        plan, node = self.plan, self.plan.nodes[i]
        args = node.attrs.get("args")
        if type(args) is list and args and type(args[0]) is list and args[0]:  # the usual [[%record, ...]]
            index, roles = plan.index, plan.roles
            for item in args[0]:
                if not (type(item) is str and len(item) > 1 and item[0] == "%"):
                    break
                j = index.get(item[1:])
                if j is None or not (roles[j] is _RECORD or _makes_token(roles[j])):
                    break
            else:
                return  # every item names a record or a tensor: nothing to say
        args = node_args(node)
        if not args and "args" not in node.attrs:
            items: Any = [f"%{n}" for n in node.inputs]  # a hand-made graph without attrs
        else:
            items = args[0] if args else None
        if not isinstance(items, (list, tuple)):
            self._add("wait_on_unknown_record", f"{node.name} waits on {items!r}, not a list of records (R9)",
                      [node.name])
            return
        if not items:
            self._add("wait_on_unknown_record", f"{node.name} waits on an empty list: it orders nothing (R9)",
                      [node.name])
            return
        for item in items:
            name = ref_name(item)
            if name is None:
                self._add("wait_on_unknown_record",
                          f"{node.name} waits on the constant {item!r}: TorchAir ignores it (R9)", [node.name])
            elif name not in plan.index:
                self._add("wait_on_unknown_record", f"{node.name} waits on {name!r}, which is not in the graph (R9)",
                          [node.name])
            elif not _makes_token(plan.roles[plan.index[name]]):
                self._add("wait_on_unknown_record",
                          f"{node.name} waits on {name} ({plan.nodes[plan.index[name]].op}), which produces no "
                          f"tensor or event (R9)", [node.name, name])

    # -- R12 ----------------------------------------------------------------------------------------
    def _mode_api(self) -> None:
        banned = GE_UNSUPPORTED if self.mode.is_ge else ACL_UNSUPPORTED
        other = Mode.REDUCE_OVERHEAD if self.mode.is_ge else Mode.MAX_AUTOTUNE
        nodes = self.plan.nodes
        bad_ops = {op for op in self.plan.ops
                   if is_stream_op(op) and (op.split(".")[1] if "." in op else op) in banned}
        for node in nodes if bad_ops else ():
            if node.op in bad_ops:
                self._add("mode_unsupported_api",
                          f"{node.name} ({node.op}) is not supported in {self.mode}; it only works in {other} (R12)",
                          [node.name])


_NOT_LISTS = "scope_args_not_lists"


def _scope_args_said(keys: Any, values: Any) -> list[tuple[str, str]]:
    """What R5/R6 say of a scope_enter's keys and values, as (rule, message after the node's name)."""
    problem = _scope_args_problem(keys, values)
    if problem:
        return [(_NOT_LISTS, problem)]
    said = []
    pairs = dict(zip(keys, values, strict=False))
    if PRIORITY_KEY in pairs and (bad := priority_problem(pairs[PRIORITY_KEY])):
        said.append(("scope_value_invalid", bad))
    for key in SWITCH_KEYS:
        if key in pairs and (bad := switch_problem(key, pairs[key])):
            said.append(("scope_value_invalid", bad))
    if STREAM_LABEL in keys and list(keys).index(STREAM_LABEL) > 0:
        said.append(("stream_label_not_first", f"'{STREAM_LABEL}' is key #{list(keys).index(STREAM_LABEL)}; aclgraph "
                                               f"takes the first value {values[0]!r} as the stream label"))
    return said


def _scope_args_problem(keys: Any, values: Any) -> str | None:
    if not isinstance(keys, (list, tuple)) or not isinstance(values, (list, tuple)):
        return (f"keys and values must be lists, got {type(keys).__name__} {keys!r} and "
                f"{type(values).__name__} {values!r}: TorchAir zips them character by character (R5)")
    if len(keys) != len(values):
        return f"{len(keys)} keys but {len(values)} values: zip drops the extra ones silently (R5)"
    bad = [v for v in (*keys, *values) if not isinstance(v, str)]
    if bad:
        return f"keys and values must be strings, got {bad[0]!r} (R5)"
    return None


def _is_literal(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    return False


def _likely_starts_with_const(node: Any) -> bool:
    """GE converters turn scalar and int-list arguments into Const ops before the compute op (R8)."""
    if not node.op.startswith(("aten.", "prims.")):
        return False
    args = node.attrs.get("args")
    if isinstance(args, (list, tuple)):
        for a in args:
            if type(a) is not str and _is_literal(a):  # (a node reference "%x" is never a literal)
                return True
    kwargs = node.attrs.get("kwargs")
    if not kwargs:  # the usual case: no generator made
        return False
    return any(_is_literal(v) for k, v in kwargs.items() if k not in _NON_CONST_KWARGS)


def _makes_token(role: Role) -> bool:
    """Whether a wait may name the node (R9): a record, or any node giving a tensor (aclgraph records after it)."""
    return role.is_op or role in (Role.RECORD, Role.INPUT)
