"""Benchmark: report.html and big-graph SVG on synthetic 10k and 50k-node ledgers (target, issue 48:
50k nodes x 4 stages written in <= 3 s).

Each ledger has four stages of one GE graph: the base graph; a pass that moves 1% of the nodes to
another stream and inserts a node plus a control edge every 500 nodes; an unchanged pass (shares
the snapshot); and a pass that renames 1% of the nodes and drops one. ``write_report`` reads every
snapshot, diffs consecutive ones, lays out the union and writes the page. Also timed:
``airctl dump --type svg`` of the 50k graph (airctl's own layered layout; ``dot`` is never used
at this size) and, when Chromium is installed, ``--dump-dom`` of the 50k report (the page parsed,
laid out and drawn once). ``write_report`` is timed ``REPEAT`` times per size in this one process:
the median wall time is the figure, its CPU time and its forked child's (report/ahead.py) beside
it (on a shared host the wall time also counts the other processes' turns), with the load average
before and after. ``--report-only``
leaves out the SVG and Chromium timings. ``--fx`` makes the four stages FX stages (the same
graphs): the report then also computes every node's origin chain and assignment (report.html's
provenance links and Assignment tab), which a GE-only ledger has none of.

    .venv/bin/python bench/bench_report.py [--report-only] [--fx] [N ...]
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from airctl.graph.model import Graph, Node  # noqa: E402
from airctl.io.json_io import write_json  # noqa: E402
from airctl.ledger.writer import LedgerWriter  # noqa: E402
from airctl.report import write_report  # noqa: E402
from bench.bench_diff import make_pair  # noqa: E402


def renamed(graph: Graph) -> Graph:
    """1% of the ops renamed (``X`` -> ``X_r``), the last-but-one op dropped."""
    names = {n.name: (f"{n.name}_r" if i % 100 == 7 and n.op not in ("Data", "NetOutput") else n.name)
             for i, n in enumerate(graph.nodes)}
    dropped = graph.nodes[-2].name

    def ref(r: str) -> str:
        p = Node.producer(r)
        return r.replace(p, names[p], 1) if p in names else r

    nodes = [replace(n, name=names[n.name], inputs=[ref(r) for r in n.inputs if Node.producer(r) != dropped],
                     control_inputs=[ref(r) for r in n.control_inputs if Node.producer(r) != dropped])
             for n in graph.nodes if n.name != dropped]
    return Graph(graph.name, graph.dialect, nodes)


def make_ledger(n: int, out: Path, fx: bool = False) -> tuple[Path, Graph]:
    """The four-stage ledger; ``fx``: the same graphs as FX stages (``aot-inference``, a user pass,
    an unchanged TorchAir pass, ``fx-final``), so the report also carries every node's provenance."""
    a, b = make_pair(n)
    w = LedgerWriter.create(out, f"bench{n}", command="compile", status="ok")
    w.graph("1-inference", "inference", name="graph_1")
    if fx:
        def as_fx(g: Graph) -> Graph:
            return Graph(g.name, "fx", g.nodes)
        w.add_stage("1-inference", "aot-inference", as_fx(a))
        w.add_stage("1-inference", "yaml:stream_pass", as_fx(b), changed=True)
        w.add_stage("1-inference", "after:noop", as_fx(b), changed=False)
        w.add_stage("1-inference", "fx-final", as_fx(renamed(b)), changed=True)
    else:
        w.add_stage("1-inference", "ge-original", a)
        w.add_stage("1-inference", "ge:after:stream_pass", b, changed=True)
        w.add_stage("1-inference", "ge:after:noop", b, changed=False)
        w.add_stage("1-inference", "ge-optimized", renamed(b), changed=True)
    w.finish()
    return w.root, b


REPEAT = 3
TARGET_S = 3.0


def _children_cpu() -> float:
    """CPU seconds of this process's reaped children (the report's forked child: report/ahead.py)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def main() -> None:
    report_only = "--report-only" in sys.argv
    fx = "--fx" in sys.argv
    sizes = [int(x) for x in sys.argv[1:] if x not in ("--report-only", "--fx")] or [10_000, 50_000]
    times: dict[int, float] = {}
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs); write_report: median of {REPEAT}")
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        for n in sizes:
            root, graph = make_ledger(n, tmp / f"runs{n}", fx)
            walls, cpus, child_cpus = [], [], []
            for _ in range(REPEAT):
                t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
                page = write_report(root)
                walls.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
                child_cpus.append(_children_cpu() - k0)
            times[n] = dt = statistics.median(walls)
            assert page is not None
            print(f"{n:>7} nodes x 4 stages: write_report {dt:.2f} s (CPU {statistics.median(cpus):.2f} s, "
                  f"its forked child's {statistics.median(child_cpus):.2f} s; "
                  f"runs {', '.join(f'{w:.2f}' for w in walls)}), "
                  f"report.html {page.stat().st_size / 1e6:.1f} MB")
        if report_only:
            sizes_done(sizes, times)
            return
        big = max(sizes)
        root, graph = make_ledger(big, tmp / "svg")
        src = tmp / "big.json"
        write_json(graph, src)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "airctl", "dump", str(src), "--type", "svg", "-o",
                               str(tmp / "big.svg")], capture_output=True, text=True, check=False)
        dt = time.perf_counter() - t0
        assert proc.returncode == 0, proc.stderr
        print(f"{big:>7} nodes: airctl dump --type svg {dt:.2f} s (whole command), "
              f"{(tmp / 'big.svg').stat().st_size / 1e6:.1f} MB")
        exe = chromium()
        if exe:
            page = root / "report.html"
            write_report(root)
            for fragment in ("search=Add_1", "view=all"):
                t0 = time.perf_counter()
                proc = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                       "--virtual-time-budget=5000", "--window-size=1280,800", "--dump-dom",
                                       page.resolve().as_uri() + "#" + fragment],
                                      capture_output=True, text=True, timeout=300, check=False)
                dt = time.perf_counter() - t0
                body = re.search(r"<body([^>]*)>", proc.stdout)
                attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1))) if body else {}
                print(f"{big:>7} nodes: chromium --dump-dom #{fragment}: {dt:.2f} s in all (browser start included); "
                      f"JSON parse {attrs.get('parse-ms', '?')} ms, viewer ready {attrs.get('ready-ms', '?')} ms, "
                      f"one frame {attrs.get('draw-ms', '?')} ms")
        else:
            print("chromium not found: browser timing skipped")
    sizes_done(sizes, times)


def sizes_done(sizes: list[int], times: dict[int, float]) -> None:
    hi = sizes[-1]
    if len(sizes) >= 2:
        lo = sizes[0]
        print(f"growth {lo}->{hi} nodes (x{hi / lo:.0f}): time x{times[hi] / times[lo]:.1f}")
    verdict = "OK" if times[hi] <= TARGET_S else "SLOW"
    print(f"{hi} write_report {times[hi]:.2f} s: {verdict} (target <= {TARGET_S:.0f} s at 50k); "
          f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
