"""Deadlocks: cycles in "must finish before" over record/wait, data, control and stream order.

In a valid FX graph every edge points forward in node order, so a cycle means some node (usually a
``wait``) refers to one that comes later, e.g. a pass inserted the wait before its record; on a GE
graph it is a cycle of data and control edges. Kahn's algorithm finds out in O(n + e) whether a
cycle exists; only then are the strongly connected components computed to name the nodes.
"""

from __future__ import annotations

from collections import deque

from airctl.graph.model import Graph, Node, is_stream_op
from airctl.graph.refs import Refs
from airctl.modes import Mode
from airctl.verify.findings import Finding
from airctl.verify.rules import make_finding


def fx_dependencies(graph: Graph, streams: list[str | None]) -> list[list[int]]:
    """Successor lists: data/sync edges plus program order on each stream."""
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    succ: list[list[int]] = [[] for _ in graph.nodes]
    last_on: dict[str | None, int] = {}
    for i, node in enumerate(graph.nodes):
        for ref in (*node.inputs, *node.control_inputs):
            j = index.get(Node.producer(ref))
            if j is not None:
                succ[j].append(i)
        prev = last_on.get(streams[i])
        if prev is not None:
            succ[prev].append(i)
        last_on[streams[i]] = i
    return succ


def ge_predecessors(graph: Graph) -> list[list[int]]:
    """Per node, the positions of the nodes its data and control inputs come from (a name's last node)."""
    refs = Refs.of(graph)  # each distinct reference parsed once, the usual "name:0" not at all
    data_in, ctrl_in = refs.data_inputs(graph), refs.inputs(graph)[1]  # the shared producer lists
    if "" in refs.index:  # an empty control reference names no node either
        ctrl_in = [[refs[r] for r in node.control_inputs if r] for node in graph.nodes]
    return [[j for j in ins if j >= 0] + [j for j in ctrl if j >= 0] if ctrl else [j for j in ins if j >= 0]
            for ins, ctrl in zip(data_in, ctrl_in, strict=True)]


def successors(preds: list[list[int]]) -> list[list[int]]:
    """The successor lists of ``preds``, each in consumer order."""
    succ: list[list[int]] = [[] for _ in preds]
    for i, ps in enumerate(preds):
        for j in ps:
            succ[j].append(i)
    return succ


def cyclic_components(succ: list[list[int]]) -> list[list[int]]:
    """Strongly connected components that contain a cycle, each sorted by node index."""
    n = len(succ)
    indeg = [0] * n
    for outs in succ:
        for j in outs:
            indeg[j] += 1
    queue = deque(i for i in range(n) if indeg[i] == 0)
    done = 0
    while queue:
        i = queue.popleft()
        done += 1
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                queue.append(j)
    if done == n:
        return []
    return [c for c in _tarjan(succ, [i for i in range(n) if indeg[i] > 0]) if len(c) > 1 or c[0] in succ[c[0]]]


def _tarjan(succ: list[list[int]], roots: list[int]) -> list[list[int]]:
    """Iterative Tarjan SCC restricted to what is reachable from ``roots``."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in roots:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, k = work.pop()
            if k == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            recurse = False
            outs = succ[v]
            while k < len(outs):
                w = outs[k]
                k += 1
                if w not in index:
                    work.append((v, k))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def deadlock_findings(graph: Graph, succ: list[list[int]], mode: Mode) -> list[Finding]:
    findings = []
    for comp in cyclic_components(succ):
        names = [graph.nodes[i].name for i in comp]
        waits = [graph.nodes[i].name for i in comp if is_stream_op(graph.nodes[i].op, "wait")]
        shown = " → ".join(names[:8]) + (" → …" if len(names) > 8 else "")
        lead = f"{', '.join(waits)} cannot finish: " if waits else ""
        f = make_finding("deadlock_cycle", mode, f"{lead}these nodes wait on each other in a cycle: {shown}",
                         names, graph)
        if f is not None:
            findings.append(f)
    return findings
