"""Benchmark: the lane view of a 10k and a 50k-node stream plan (target: 50k written in <= 5 s).

Not a unit test: prints figures. The graph repeats a transformer-like block over three streams
(``layers.<i>.attn`` k/v projections on a side stream, ``layers.<i>.mlp`` on another, each scope
opened and closed, with a record/wait pair on both sides and cross-stream reads), so every part
of the lane view does real work: the verifier's plan and findings, rows, bands, arrows and, past
2,000 nodes, folding by module. Timed side by side:

- ``airctl dump graph.json --type lanes -o plan.svg``, the whole command (a new Python process:
  start, read the JSON, verify, lay out, write), folded by module as it is by default at this size;
- the same in-process, step by step (read, verify, build, SVG) and unfolded (one row per op);
- ``--type lanes -o plan.html`` (the viewer on its lane pane: layout, lanes and payload).

    .venv/bin/python bench/bench_lanes.py [N ...]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airctl.graph.model import Graph, Node  # noqa: E402
from airctl.io.json_io import read_json, write_json  # noqa: E402
from airctl.render.lanes import build_lanes  # noqa: E402
from airctl.render.lanes_svg import lanes_svg  # noqa: E402
from airctl.verify import verify  # noqa: E402

TARGET_S = 5.0


def _op(name: str, op: str, module: str, stream: str | None, *inputs: str) -> Node:
    return Node(name, op, inputs=list(inputs), attrs={"args": [f"%{i}" for i in inputs]}, kind="call_function",
                module=module, stream=stream)


def _air(name: str, op: str, args: list, stream: str | None) -> Node:
    refs = [a[1:] for a in (args[0] if args and isinstance(args[0], list) else []) if isinstance(a, str)
            and a.startswith("%")]
    return Node(name, f"air.{op}.default", inputs=refs if op == "wait" else [], attrs={"args": args},
                kind="call_function", stream=stream)


def _scope(b: str, stream: str, module: str, body: list[tuple[str, str, tuple[str, ...]]], waits_on: str,
           ) -> list[Node]:
    nodes = [_air(f"{b}_enter", "scope_enter", [["_user_stream_label"], [stream]], None),
             _air(f"{b}_w_in", "wait", [[f"%{waits_on}"]], stream)]
    nodes += [_op(f"{b}_{n}", op, module, stream, *ins) for n, op, ins in body]
    nodes += [_air(f"{b}_rec", "record", [], stream), _air(f"{b}_exit", "scope_exit", [], stream)]
    return nodes


def synthetic(n_target: int) -> Graph:
    """A stream plan of about ``n_target`` nodes: 30 nodes per layer, three streams."""
    nodes = [Node("x", "placeholder", kind="placeholder"), Node("w", "placeholder", kind="placeholder")]
    h, i = "x", 0
    while len(nodes) < n_target - 1:
        p, m = f"l{i}", f"layers.{i}"
        nodes += [_op(f"{p}_ln1", "aten.native_layer_norm.default", f"{m}.ln1", None, h),
                  _air(f"{p}_r_ln1", "record", [], None),
                  _op(f"{p}_q", "aten.mm.default", f"{m}.attn.q_proj", None, f"{p}_ln1", "w")]
        nodes += _scope(f"{p}_kv", "attn_kv", f"{m}.attn", [
            ("k", "aten.mm.default", (f"{p}_ln1", "w")), ("kt", "aten.t.default", (f"{p}_kv_k",)),
            ("v", "aten.mm.default", (f"{p}_ln1", "w"))], f"{p}_r_ln1")
        nodes += [_air(f"{p}_w_kv", "wait", [[f"%{p}_kv_rec"]], None),
                  _op(f"{p}_s", "aten.mm.default", f"{m}.attn", None, f"{p}_q", f"{p}_kv_kt"),
                  _op(f"{p}_sm", "aten._softmax.default", f"{m}.attn", None, f"{p}_s"),
                  _op(f"{p}_a", "aten.mm.default", f"{m}.attn", None, f"{p}_sm", f"{p}_kv_v"),
                  _op(f"{p}_o", "aten.mm.default", f"{m}.attn.o_proj", None, f"{p}_a", "w"),
                  _op(f"{p}_h", "aten.add.Tensor", m, None, h, f"{p}_o"),
                  _op(f"{p}_ln2", "aten.native_layer_norm.default", f"{m}.ln2", None, f"{p}_h"),
                  _air(f"{p}_r_ln2", "record", [], None)]
        nodes += _scope(f"{p}_mlp", "mlp", f"{m}.mlp", [
            ("up", "aten.mm.default", (f"{p}_ln2", "w")), ("act", "aten.gelu.default", (f"{p}_mlp_up",)),
            ("down", "aten.mm.default", (f"{p}_mlp_act", "w"))], f"{p}_r_ln2")
        nodes += [_air(f"{p}_w_mlp", "wait", [[f"%{p}_mlp_rec"]], None),
                  _op(f"{p}_out", "aten.add.Tensor", m, None, f"{p}_h", f"{p}_mlp_down")]
        h, i = f"{p}_out", i + 1
    nodes.append(Node("output", "output", inputs=[h], attrs={"args": [[f"%{h}"]]}, kind="output"))
    return Graph(f"synthetic-{len(nodes)}", "fx", nodes)


def _command(src: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of ``airctl dump SRC --type lanes -o OUT`` in a new process.

    On a busy machine the wall time includes waiting for a core; the CPU time is what the command
    costs, and close to its wall time on an idle machine (it runs on one thread)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "airctl", "dump", str(src), "--type", "lanes", "--mode",
                           "reduce-overhead", "-o", str(out)], capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stderr
    return dt, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    sizes = [int(x) for x in sys.argv[1:]] or [10_000, 50_000]
    results: dict[int, float] = {}
    cpus: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        for n in sizes:
            src = tmp / f"plan{n}.json"
            write_json(synthetic(n), src)
            t0 = time.perf_counter()
            graph = read_json(src)
            t1 = time.perf_counter()
            findings = verify(graph, "reduce-overhead")
            t2 = time.perf_counter()
            view = build_lanes(graph, "reduce-overhead", findings, fold="module")
            t3 = time.perf_counter()
            text = lanes_svg(view)
            t4 = time.perf_counter()
            full = build_lanes(graph, "reduce-overhead", findings)
            full_text = lanes_svg(full)
            t5 = time.perf_counter()
            print(f"{len(graph):>6} nodes, {len(view.streams)} lanes, {len(view.arrows)} arrows, {len(findings)} "
                  f"findings: read {t1 - t0:.2f} s, verify {t2 - t1:.2f} s, lanes (folded: {view.rows} rows, "
                  f"{len(view.runs)} runs) {t3 - t2:.2f} s, svg {t4 - t3:.2f} s ({len(text) / 1e6:.1f} MB); "
                  f"unfolded ({full.rows} rows) lanes+svg {t5 - t4:.2f} s ({len(full_text) / 1e6:.1f} MB)")
            for suffix in ("svg", "html"):
                out = tmp / f"plan{n}.{suffix}"
                dt, cpu = _command(src, out)
                if suffix == "svg":
                    results[n] = dt
                    cpus[n] = cpu
                print(f"{len(graph):>6} nodes: airctl dump --type lanes -o plan.{suffix}: {dt:.2f} s wall, {cpu:.2f} s "
                      f"CPU (whole command), {out.stat().st_size / 1e6:.1f} MB")
    big = max(sizes)
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for label, value in (("wall", results[big]), ("CPU", cpus[big])):
        verdict = "OK" if value <= TARGET_S else "SLOW"
        print(f"{big} nodes: lane view written in {value:.2f} s {label}: {verdict} (target <= {TARGET_S:.0f} s)")
    if len(sizes) >= 2:
        lo = min(sizes)
        print(f"growth {lo}->{big} nodes (x{big / lo:.0f}): whole command x{cpus[big] / cpus[lo]:.1f} (CPU)")


if __name__ == "__main__":
    main()
