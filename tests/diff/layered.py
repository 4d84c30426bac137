"""Graphs shaped like real models, with known edits: the ground truth for the diff's property tests and bench.

A model is one random layer (8-12 ops with branches, a residual, per-layer weights, a shared mask
input, some ops on a side stream joined back by a control edge in GE or a record/wait pair in FX)
repeated ``layers`` times. The edited copy gets ``k`` edits of each kind, scattered (no edit
touches a node within two steps of another edit's nodes):

- ``op``: an op type changed (same number of inputs);
- ``stream``: a node moved to or off a side stream;
- ``sync``: a control edge inserted (GE), or a ``record`` after one node and a ``wait`` before a later
  one (FX);
- ``insert``: a node inserted on a data edge; ``remove``: a one-input node removed, its users rewired
  (both with an op unlike the neighbours': in ``x -> Relu -> Relu`` no diff can tell which Relu
  is the inserted one, and any answer is as small as the truth).

Both graphs are then put in a random order that topology allows (FX ``record``/``wait`` stay next
to the node they follow or precede: their place in program order is their meaning; graph inputs
keep their argument order) and named the way TorchAir (``MatMul``, ``MatMul_1``) and FX (``mm``,
``mm_1``) number ops in file order. :attr:`Case.truth` pairs each node with its counterpart, so
the report the truth gives (:meth:`Case.expected`) is what an exact matcher must report.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from airctl.diff.match import Matching
from airctl.diff.report import DiffReport, build_report
from airctl.graph.model import Graph, Node

KINDS = ("op", "stream", "sync", "insert", "remove")
# op -> (arity, FX target, FX name); GE names are the op itself
OPS = {"MatMul": (2, "aten.mm.default", "mm"), "Add": (2, "aten.add.Tensor", "add"),
       "Mul": (2, "aten.mul.Tensor", "mul"), "Sub": (2, "aten.sub.Tensor", "sub"),
       "Cast": (1, "aten._to_copy.default", "_to_copy"), "Relu": (1, "aten.relu.default", "relu"),
       "Transpose": (1, "aten.t.default", "t"), "Reshape": (1, "aten.view.default", "view"),
       "Softmax": (1, "aten._softmax.default", "_softmax"), "Neg": (1, "aten.neg.default", "neg")}
UNARY = [op for op, spec in OPS.items() if spec[0] == 1]
FX_NAMES = {spec[1]: spec[2] for spec in OPS.values()} | {
    "aten.cat.default": "cat", "air.record.default": "record_default", "air.wait.default": "wait_default"}
SIDE = "stream_1"


@dataclass(eq=False)
class _N:
    """A node before naming: ``ins``/``ctrl`` are ids; ``glue`` keeps an FX record/wait next to a node."""

    id: int
    op: str
    ins: list[int] = field(default_factory=list)
    ctrl: list[int] = field(default_factory=list)
    stream: str | None = None
    arg: int | None = None  # graph input: its argument index
    glue: tuple[str, int] | None = None  # ("after" | "before", node id)


@dataclass
class Case:
    a: Graph
    b: Graph
    truth: dict[str, str]  # a name -> b name
    made: dict[str, int]  # edits made, by kind

    def expected(self) -> DiffReport:
        return build_report(self.a, self.b, Matching(a_to_b=dict(self.truth)))


def model(layers: int, rng: random.Random, dialect: str) -> list[_N]:
    """The unedited model in program order (see the module docstring)."""
    nodes: list[_N] = []

    def add(op: str, ins: list[int], **kw: object) -> _N:
        node = _N(len(nodes), op, ins, **kw)  # type: ignore[arg-type]
        nodes.append(node)
        return node

    args = [0]

    def data() -> int:
        args[0] += 1
        return add("Data", [], arg=args[0] - 1).id

    x, mask = data(), data()
    template = _template(rng)
    for _ in range(layers):
        made: list[int] = []
        used: set[int] = set()
        for op, refs, side in template:
            ins = []
            for ref in refs:
                src = {"in": x, "mask": mask}.get(ref) if isinstance(ref, str) else made[ref]
                ins.append(data() if ref == "w" else src)
            made.append(add(op, ins, stream=SIDE if side else None).id)
            used.update(ins)
        last_side = max((k for k, (_, _, side) in enumerate(template) if side), default=None)
        if last_side is not None:
            join = next(k for k in range(last_side + 1, len(template)) if not template[k][2])
            _sync(nodes, made[last_side], made[join], dialect)
        x = add("ConcatV2", [m for m in made if m not in used]).id
    add("NetOutput", [x])
    return nodes


def _template(rng: random.Random) -> list[tuple[str, list, bool]]:
    """One layer: (op, input refs, on the side stream?); a ref is "in", "mask", "w" or an earlier op's position."""
    out: list[tuple[str, list, bool]] = []
    size = rng.randint(8, 12)
    side_at = rng.randint(1, size - 4)
    for k in range(size):
        op = rng.choice(list(OPS))
        refs: list = []
        for slot in range(OPS[op][0]):
            choices = ["in"] + list(range(max(0, k - 3), k))
            refs.append("w" if op == "MatMul" and slot == 1 else
                        "mask" if op == "Add" and slot == 1 and rng.random() < 0.3 else rng.choice(choices))
        out.append((op, refs, side_at <= k < side_at + 2))
    return out


def _sync(nodes: list[_N], src: int, dst: int, dialect: str) -> list[int]:
    """``dst`` waits for ``src``: a control edge (GE) or a record/wait pair (FX); returns the new nodes."""
    if dialect == "ge":
        nodes[dst].ctrl.append(src)
        return []
    record = _N(len(nodes), "air.record.default", stream=nodes[src].stream, glue=("after", src))
    nodes.append(record)
    wait = _N(len(nodes), "air.wait.default", [record.id], stream=nodes[dst].stream, glue=("before", dst))
    nodes.append(wait)
    return [record.id, wait.id]


def edit(nodes: list[_N], k: int, rng: random.Random, dialect: str, spread: int = 2,
         kinds: tuple[str, ...] = KINDS) -> tuple[list[_N], dict[str, int]]:
    """A copy of ``nodes`` with up to ``k`` scattered edits of each of ``kinds``; returns it and the
    edits made (``spread``: how many steps around an edit no other edit may touch)."""
    out = [_N(n.id, n.op, n.ins[:], n.ctrl[:], n.stream, n.arg, n.glue) for n in nodes]
    by_id = {n.id: n for n in out}
    near: dict[int, set[int]] = {n.id: {n.id} for n in out}  # a node, its neighbours, its glued nodes
    for n in out:
        for m in [*n.ins, *n.ctrl, *([n.glue[1]] if n.glue else [])]:
            near[n.id].add(m)
            near[m].add(n.id)
    touched: set[int] = set()
    plain = [n for n in out if n.op in OPS and len(near[n.id]) > 1]

    def free(*ids: int) -> bool:
        return not any(near[i] & touched for i in ids)

    def touch(*ids: int) -> None:  # an edit's node, its neighbours and theirs: no other edit comes that close
        for i in ids:
            for j in near[i] if spread > 1 else (i,):
                touched.update(near[j])

    made = dict.fromkeys(kinds, 0)
    for kind in (kind for kind in KINDS if kind in kinds):  # in this order: syncs index nodes by position
        for _ in range(k):
            for _attempt in range(50):
                n = rng.choice(plain)
                if not free(n.id):
                    continue
                if kind == "op":
                    n.op = rng.choice([op for op in OPS if op != n.op and OPS[op][0] == OPS[n.op][0]])
                elif kind == "stream":
                    n.stream = None if n.stream else "stream_2"
                elif kind == "sync":
                    later = [m for m in plain if n.id < m.id <= n.id + 30 and m.id not in near[n.id] and free(m.id)]
                    if not later:
                        continue
                    m = rng.choice(later)
                    touch(m.id)
                    for new in _sync(out, n.id, m.id, dialect):
                        by_id[new] = out[new]
                elif kind == "insert":
                    slot = rng.randrange(len(n.ins))
                    src = by_id[n.ins[slot]]
                    if not free(src.id):
                        continue
                    touch(src.id)
                    # an op unlike both ends: x -> Relu -> Relu cannot say which Relu is the new one
                    op = rng.choice([op for op in UNARY if op not in (src.op, n.op)])
                    new = _N(max(by_id) + 1, op, [src.id], stream=n.stream)
                    out.append(new)
                    by_id[new.id] = new
                    near[new.id] = {new.id, src.id, n.id}
                    n.ins[slot] = new.id
                else:  # remove
                    around = [by_id[i] for i in near[n.id] if i != n.id]
                    if len(n.ins) != 1 or n.ctrl or any(n.id in m.ctrl or m.glue or m.op == n.op for m in around):
                        continue
                    touch(*near[n.id])
                    for m in around:
                        m.ins = [n.ins[0] if i == n.id else i for i in m.ins]
                    out.remove(n)
                    plain.remove(n)
                    del by_id[n.id]
                touch(n.id)
                made[kind] += 1
                break
    return out, made


def _order(nodes: list[_N], rng: random.Random, dialect: str) -> list[_N]:
    """A random order that topology allows (see the module docstring)."""
    after: dict[int, list[_N]] = {}
    before: dict[int, list[_N]] = {}
    deps: dict[int, set[int]] = {}
    by_id = {n.id: n for n in nodes}
    for n in nodes:
        if n.glue:
            (after if n.glue[0] == "after" else before).setdefault(n.glue[1], []).append(n)
        else:
            deps[n.id] = {i for i in [*n.ins, *n.ctrl] if by_id[i].glue is None}
    for waits in before.values():  # a wait's target runs after the node its record follows
        for wait in waits:
            deps[wait.glue[1]].add(by_id[wait.ins[0]].glue[1])  # type: ignore[index]
    first = sorted((n for n in nodes if n.arg is not None), key=lambda n: n.arg) if dialect == "fx" else []
    users: dict[int, list[int]] = {i: [] for i in deps}
    for i, ds in deps.items():
        for d in ds:
            users[d].append(i)
    left = {i: len(ds) for i, ds in deps.items()}
    pinned = {n.id for n in first}
    ready = [i for i, c in left.items() if not c and i not in pinned]
    order: list[_N] = []

    def emit(i: int) -> None:
        order.extend(before.get(i, []))
        order.append(by_id[i])
        order.extend(after.get(i, []))
        for u in users[i]:
            left[u] -= 1
            if not left[u]:
                ready.append(u)

    for n in first:
        emit(n.id)
    while ready:
        k = rng.randrange(len(ready))
        ready[k], ready[-1] = ready[-1], ready[k]
        emit(ready.pop())
    return order


def _graph(nodes: list[_N], rng: random.Random, dialect: str, name: str) -> tuple[Graph, dict[int, str]]:
    """The nodes in a random allowed order, named and shaped as ``dialect`` dumps them."""
    order = _order(nodes, rng, dialect)
    counts: dict[str, int] = {}
    names: dict[int, str] = {}
    for n in order:
        if n.arg is not None:
            names[n.id] = f"arg{n.arg}_1"
            continue
        base = {"NetOutput": "output" if dialect == "fx" else "NetOutput"}.get(n.op) or (
            FX_NAMES.get(_fx_op(n.op), n.op) if dialect == "fx" else n.op)
        seen = counts.get(base, 0)
        counts[base] = seen + 1
        names[n.id] = base if not seen else f"{base}_{seen}"
    out = []
    for n in order:
        ins = [names[i] for i in n.ins]
        if dialect == "fx":
            kind = "placeholder" if n.arg is not None else "output" if n.op == "NetOutput" else "call_function"
            op = {"placeholder": "placeholder", "output": "output"}.get(kind) or _fx_op(n.op)
            args = [["%" + r for r in ins]] if op in ("air.wait.default", "aten.cat.default", "output") else \
                ["%" + r for r in ins]
            out.append(Node(names[n.id], op, inputs=ins, stream=n.stream, kind=kind,
                            attrs={} if kind == "placeholder" else {"args": args}))
        else:
            attrs: dict = {"index": n.arg} if n.arg is not None else {}
            if n.stream:
                attrs["_user_stream_label"] = n.stream
            out.append(Node(names[n.id], n.op, inputs=[f"{r}:0" for r in ins],
                            control_inputs=[names[i] for i in n.ctrl], stream=n.stream, attrs=attrs))
    return Graph(name, dialect, out), names


def _fx_op(op: str) -> str:
    return OPS[op][1] if op in OPS else {"ConcatV2": "aten.cat.default"}.get(op, op)


def layers_for(nodes: int, seed: int, dialect: str = "ge") -> int:
    """How many layers make a model of about ``nodes`` nodes with :func:`make_case` (same seed)."""
    one, two = (len(model(k, random.Random(seed), dialect)) for k in (1, 2))
    return max(1, round((nodes - (2 * one - two)) / (two - one)))


def make_case(layers: int, k: int, seed: int, dialect: str = "ge", spread: int = 2,
              kinds: tuple[str, ...] = KINDS) -> Case:
    """A model of ``layers`` layers and its copy with ``k`` scattered edits of each kind, both
    renumbered and reordered (see the module docstring)."""
    rng = random.Random(seed)
    nodes = model(layers, rng, dialect)
    edited, made = edit(nodes, k, rng, dialect, spread, kinds)
    a, names_a = _graph(nodes, rng, dialect, "a")
    b, names_b = _graph(edited, rng, dialect, "b")
    truth = {names_a[i]: names_b[i] for i in names_a if i in names_b}
    return Case(a, b, truth, made)
