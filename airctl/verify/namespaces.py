"""Stream ops of the wrong namespace for the mode (rule ``foreign_stream_ops``).

TorchAir's compiler reads ``torch.ops.air.*`` stream ops; npugraph_ex, its aclgraph successor in a
package of its own, reads only its copies ``torch.ops.npugraph_ex.*`` (same names, same
arguments). A graph built with the other API compiles, but the ops order nothing: npugraph_ex puts
no stream or closure event around an ``air.scope_enter``, and GE has no converter for
``npugraph_ex.*``. The graph model and the executor read both namespaces alike, so this check is
what tells them apart.

>>> from airctl.graph.model import Graph, Node
>>> g = Graph("g", "fx", [Node("e", "air.scope_enter.default", kind="call_function")])
>>> [f.rule for f in foreign_stream_ops(g, "npugraph_ex")], foreign_stream_ops(g, "reduce-overhead")
(['foreign_stream_ops'], [])
"""

from __future__ import annotations

from airctl.graph.model import Graph, is_stream_op
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.rules import make_finding


def foreign_stream_ops(graph: Graph, mode: Mode, ops: set[str] | None = None) -> list[Finding]:
    """One finding naming the stream ops ``mode``'s compiler does not read (none when all fit);
    ``ops``: the graph's distinct ops, when the caller has them."""
    mode = Mode.parse(mode)
    own = mode.stream_namespace
    ops = ops if ops is not None else {n.op for n in graph.nodes}
    foreign_ops = {op for op in ops if is_stream_op(op) and op.split(".")[0] != own}
    foreign = [n.name for n in graph.nodes if n.op in foreign_ops] if foreign_ops else []
    if not foreign:
        return []
    other = next(m.stream_namespace for m in Mode if m.stream_namespace != own)
    shown = ", ".join(foreign[:6]) + (", ..." if len(foreign) > 6 else "")
    finding = make_finding(
        "foreign_stream_ops", mode.semantics,
        f"{len(foreign)} stream op(s) of torch.ops.{other} in a {mode} graph ({shown}): {mode.meaning.reader} "
        f"reads only torch.ops.{own}.*, so they order nothing there", foreign, graph)
    return [finding] if finding is not None else []


def as_plan_in(findings: list[Finding], mode: Mode, written_for: Mode | None) -> list[Finding]:
    """The findings of a graph whose passes ran under ``written_for``, checked under another ``mode``:
    without ``foreign_stream_ops``, since the same pass file writes each mode's own namespace
    (:mod:`airctl.passes.builtin`): under ``mode`` the plan's ops would be ``mode``'s. ``passes apply``'s
    "plan under other modes" and ``airctl check --mode`` of its ledger both count through here.

    >>> from airctl.verify.rules import make_finding
    >>> from airctl.graph.model import Node
    >>> g = Graph("g", "fx", [Node("e", "air.scope_enter.default", kind="call_function")])
    >>> found = foreign_stream_ops(g, "npugraph_ex")
    >>> len(as_plan_in(found, "npugraph_ex", "reduce-overhead")), len(as_plan_in(found, "npugraph_ex", None))
    (0, 1)
    """
    if written_for is None or Mode.parse(written_for) is Mode.parse(mode):
        return findings
    return [f for f in findings if f.rule != "foreign_stream_ops"]
