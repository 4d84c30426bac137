"""One predicted step, the single definition every command prints.

``profile --times``, ``--compare``, ``passes suggest``, ``passes fix`` and report.html all price a
plan here, so one plan gives one number everywhere (docs/profile.md "The predicted step"):

    step_us = Σ over the run's graphs of (replayed span of the graph) + launch_us per graph execution

``launch_us`` is the mode's host cost of one graph execution (``Mode.meaning.launch_us``, an assumption
stated in the output; ``--launch-us`` replaces it). The replay (:mod:`.replay`) gets what the
:class:`Conditions` say: the device's core pools and HBM bandwidth (only with a device: without
one nothing is shared), each kernel's cores (:func:`core_demand`), each memory-bound kernel's traffic
(:func:`traffic`), and when the host releases each task (:mod:`.host`).

A plan the verifier finds racy in its mode is priced as it is *and* as its race-free twin
(:func:`race_free`: every cross-stream read ordered after its producer, as the waits ``passes fix``
writes order it); the race-free step is the one that counts (:attr:`Priced.valid_us`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from airctl.devices import Device
from airctl.graph.model import Graph, Node
from airctl.modes import Mode
from airctl.predict.estimate import node_work
from airctl.predict.host import releases
from airctl.predict.plan import KERNEL, ReplayPlan, Task, order_cross_stream_reads
from airctl.predict.replay import Replayed, Resources, replay

CUBE_OPS = ("mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "convolution", "conv", "MatMul", "BatchMatMul",
            "Conv2D", "Conv3D", "GroupedMatmul", "QuantBatchMatmul", "WeightQuantBatchMatmul")
MIX_OPS = ("attention", "Attention", "FlashAttention", "flash_attention")
ACCEL_KIND = {"AI_CORE": "cube", "AIC": "cube", "AI_VECTOR_CORE": "vector", "AIV": "vector",
              "MIX_AIC": "mix_aic", "MIX_AIV": "mix_aiv"}


@dataclass
class Conditions:
    """Everything a replay of a plan depends on besides the plan and its kernels' times."""

    device: Device | None = None
    gap_us: float = 0.0  # dispatch gap after each kernel (measured from a profile)
    latency_us: float = 0.0  # event latency (measured from a profile)
    launch_us: float | None = None  # --launch-us; None: the plan's mode's launch_us (airctl.modes.MEANINGS)
    host_us: float | None = None  # host launch cost per task, eager/GE program order (from a profile)
    fx_graphs: list[Graph] = field(default_factory=list)  # shapes, for bytes and FLOPs
    stream_limits: dict[str, dict[str, float]] = field(default_factory=dict)  # stream -> pool -> cores at most

    @cached_property
    def shapes(self) -> dict[str, Node]:
        """The FX nodes by name (their recorded shapes give bytes and FLOPs), built once per conditions."""
        return {n.name: n for g in self.fx_graphs if g.dialect == "fx" for n in g.nodes}

    def launch_for(self, mode: Mode | None) -> float:
        """``--launch-us``, else ``mode``'s host cost of one graph execution (max-autotune's for no mode)."""
        return self.launch_us if self.launch_us is not None else (mode or Mode.MAX_AUTOTUNE).meaning.launch_us


@dataclass
class Priced:
    """One plan's replay, and its step (launch included)."""

    replayed: Replayed
    launch_us: float

    @property
    def step_us(self) -> float:
        return self.replayed.span_us + self.launch_us


def price(plan: ReplayPlan, durations_us: list[float], cores: list[float | None], cond: Conditions) -> Priced:
    """Replay ``plan`` under ``cond`` with each task's time and (table) core count."""
    res = resources(plan, durations_us, cores, cond)
    if cond.stream_limits and res.demand is not None:
        durations_us = limit_streams(plan, durations_us, res.demand, cond.stream_limits)
    done = replay(plan, durations_us, gap_us=cond.gap_us, latency_us=cond.latency_us, resources=res)
    return Priced(done, 0.0 if plan.dialect == "profile" else cond.launch_for(plan.compiled))


def resources(plan: ReplayPlan, durations_us: list[float], cores: list[float | None], cond: Conditions) -> Resources:
    dev = cond.device
    res = Resources(release_us=releases(plan, cond.host_us))
    if dev is None:
        return res
    res.pools = {k: float(v) for k, v in dev.pools().items()}
    res.demand = [core_demand(t, c, dev) if t.kind == KERNEL else None for t, c in zip(plan.tasks, cores, strict=True)]
    if dev.hbm_tb_s:
        res.bandwidth = dev.hbm_tb_s * 1e6  # bytes per µs
        res.traffic = [traffic(t, d, dev, cond.shapes) if t.kind == KERNEL else None
                       for t, d in zip(plan.tasks, durations_us, strict=True)]
    return res


def limit_streams(plan: ReplayPlan, durations_us: list[float], demand: list[dict[str, float] | None],
                  limits: dict[str, dict[str, float]]) -> list[float]:
    """Per-stream core limits (npugraph_ex's ``limit_core_num(aic, aiv, stream=…)``): a kernel on a limited
    stream gets at most the limit's cores of each pool, and takes longer by the cores it lost (its waves:
    ``time × demand / limit``, the slower pool for a mixed kernel). ``demand`` is changed in place."""
    out = list(durations_us)
    for t in plan.tasks:
        limit = limits.get(t.stream)
        want = demand[t.index]
        if not limit or not want:
            continue
        stretch = 1.0
        for pool, cores in list(want.items()):
            cap = limit.get(pool)
            if cap is not None and 0 < cap < cores:
                stretch = max(stretch, cores / cap)
                want[pool] = cap
        out[t.index] = durations_us[t.index] * stretch
    return out


def kind_of(task: Task) -> str:
    """``cube``, ``vector``, ``mix_aic``/``mix_aiv`` (mixed kernels), from the profile's Accelerator Core when
    it says, else from the op: matmuls and convolutions are cube, attention mixed, the rest vector.

    >>> mm, add = Task(0, "mm", "aten.mm.default", "s", "kernel"), Task(1, "a", "aten.add.Tensor", "s", "kernel")
    >>> kind_of(mm), kind_of(add)
    ('cube', 'vector')
    """
    accel = str(task.meta.get("core") or "").upper()
    if accel in ACCEL_KIND:
        return ACCEL_KIND[accel]
    op = task.op.split(".")[1] if task.op.startswith(("aten.", "npu.")) and task.op.count(".") >= 1 else task.op
    if any(m in op for m in MIX_OPS):
        return "mix_aic"
    if any(op == c or op.startswith(c) for c in CUBE_OPS):
        return "cube"
    return "vector"


def core_demand(task: Task, cores: float | None, dev: Device) -> dict[str, float] | None:
    """The cores ``task`` holds, per pool: from the profile's (Block Dim, Mix Block Dim), else the table's
    count on the pool of the task's kind (a mixed kernel: that many cube cores and twice as many vector
    cores, the A2 ratio); None when neither gives a count."""
    kind = kind_of(task)
    blocks = task.meta.get("blocks")
    if blocks:
        own, other = float(blocks[0]), float(blocks[1])
    elif cores is not None:
        own, other = float(cores), 2.0 * float(cores) if kind.startswith("mix") else 0.0
    else:
        return None
    if dev.coupled:
        return {"aicore": own}
    if kind == "cube":
        return {"cube": own}
    if kind == "vector":
        return {"vector": own}
    first, second = ("cube", "vector") if kind == "mix_aic" else ("vector", "cube")
    return {first: own, second: other} if other else {first: own}


def traffic(task: Task, dur_us: float, dev: Device, shapes: dict[str, Node]) -> float | None:
    """Bytes per µs ``task`` moves alone when it is memory-bound (its bytes take longer at the device's
    bandwidth than its FLOPs at its peak), else None. Bytes and FLOPs from the FX nodes' shapes."""
    if dur_us <= 0 or dev.tflops_16 is None or dev.hbm_tb_s is None:
        return None
    flops = bytes_ = 0.0
    found = False
    for name in (task.name, *task.aliases):
        node = shapes.get(name)
        if node is None:
            continue
        work = node_work(node, shapes)
        if work is not None:
            found = True
            flops, bytes_ = flops + work[0], bytes_ + work[1]
    if not found or bytes_ <= 0:
        return None
    compute_us = flops / (dev.tflops(work_dtype(task, shapes)) * 1e6) if flops else 0.0
    memory_us = bytes_ / (dev.hbm_tb_s * 1e6)
    return bytes_ / dur_us if memory_us >= compute_us else None


def work_dtype(task: Task, shapes: dict[str, Node]) -> str | None:
    node = shapes.get(task.name) or next((shapes[a] for a in task.aliases if a in shapes), None)
    tensors = (node.meta.get("tensors") or []) if node is not None else []
    first = tensors[0] if tensors and isinstance(tensors[0], dict) else {}
    return str(first.get("dtype", "")).removeprefix("torch.") or None


def race_free(plan: ReplayPlan, graph: Graph | None) -> ReplayPlan:
    """``plan`` with every cross-stream read ordered after its producer (what a wait before the reader
    gives, the wait ``passes fix`` writes). GE already orders them: max-autotune plans come back as they are."""
    if not plan.aclgraph or graph is None or graph.dialect != "fx":
        return plan
    tasks = [replace(t, after=list(t.after)) for t in plan.tasks]
    order_cross_stream_reads(tasks, graph)
    return replace(plan, tasks=tasks)


def describe(cond: Conditions) -> dict[str, Any]:
    """What ``--json`` says of the conditions (``device`` never null when one was used)."""
    dev = cond.device
    return {"device": dev.name if dev else None,
            "pools": dev.pools() if dev else None,
            "bandwidth_tb_s": dev.hbm_tb_s if dev else None,
            "gap_us": cond.gap_us, "latency_us": cond.latency_us, "host_us": cond.host_us}
