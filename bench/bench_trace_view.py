"""Peak resident memory of ``airctl profile analyze`` on a 1 GB ``trace_view.json`` (issue 33, acceptance 2).

Not a unit test: writes a synthetic torch_npu profiler folder of the size asked (default 1 GiB) into a
temporary folder, runs ``airctl profile analyze`` on it in a fresh process, and prints the child's peak
RSS (``ru_maxrss``) and wall time. Target: under 500 MB. The trace is shaped like torch_npu's
(``fixtures/profiles/npu_level1``): per op, an ``aten::`` host op with its args, an ``AscendCL@`` launch, a
flow pair, the device task on an ``Ascend Hardware`` stream lane with its args, and an ``Overlap
Analysis`` span; HCCL ops on a ``Communication`` process every 50 ops; process and thread names first.
Only ``trace_view.json`` is there, so the tasks come from it (the heaviest path).

    .venv/bin/python bench/bench_trace_view.py [--gib 1.0] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOST, CANN, HW, COMM, OVERLAP = 3002, 3074272, 3074496, 3074560, 3075040


def _meta() -> list[dict]:
    procs = [(HOST, "Python"), (CANN, "CANN"), (HW, "Ascend Hardware"), (COMM, "Communication"),
             (OVERLAP, "Overlap Analysis")]
    out = [{"name": "process_name", "pid": p, "tid": 0, "ph": "M", "args": {"name": n}} for p, n in procs]
    out += [{"name": "thread_name", "pid": HW, "tid": s, "ph": "M", "args": {"name": f"Stream {s}"}} for s in (2, 7)]
    out += [{"name": "thread_name", "pid": COMM, "tid": 0, "ph": "M", "args": {"name": "Group 0 Communication"}},
            {"name": "process_labels", "pid": HW, "tid": 0, "ph": "M", "args": {"labels": "NPU 0"}}]
    return out


def _op(k: int, t_us: float) -> list[str]:
    name = ("MatMul", "Add", "Mul", "Softmax", "LayerNorm")[k % 5]
    stream = 2 if k % 3 else 7
    ts = f"{t_us:.3f}"
    rows = [
        {"name": f"aten::{name.lower()}", "pid": HOST, "tid": HOST, "ts": ts, "dur": 12.5, "ph": "X", "cat": "cpu_op",
         "args": {"Sequence number": k, "Fwd thread id": 0, "Input Dims": [[64, 1024], [1024, 1024]],
                  "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
        {"name": f"AscendCL@aclnn{name}", "pid": CANN, "tid": HOST, "ts": f"{t_us + 1:.3f}", "dur": 8.0, "ph": "X",
         "args": {}},
        {"ph": "s", "bp": "e", "name": "async_npu", "id": k, "pid": CANN, "tid": HOST, "ts": f"{t_us + 1:.3f}",
         "cat": "async_npu"},
        {"ph": "f", "bp": "e", "name": "async_npu", "id": k, "pid": HW, "tid": stream, "ts": f"{t_us + 20:.3f}",
         "cat": "async_npu"},
        {"name": f"aclnn{name}_{name}_{name}", "pid": HW, "tid": stream, "ts": f"{t_us + 20:.3f}", "dur": 31.165,
         "ph": "X", "args": {"Model Id": 4294967295, "Task Type": "AI_CORE", "Physic Stream Id": stream,
                             "Task Id": k % 65536, "Batch Id": 0, "Subtask Id": 4294967295, "connection_id": k}},
        {"name": "Computing", "pid": OVERLAP, "tid": 0, "ts": f"{t_us + 20:.3f}", "dur": 31.165, "ph": "X",
         "args": {}},
    ]
    if k % 50 == 49:
        rows.append({"name": f"hcom_allReduce__{k}_0_1", "pid": COMM, "tid": 0, "ts": f"{t_us + 40:.3f}",
                     "dur": 250.0, "ph": "X", "args": {"rank_size": 2, "connection_id": k, "data_type": "BFP16",
                                                       "alg_type": "MESH-RING-NA-NA", "count": 1048576}})
    return [json.dumps(r) for r in rows]


def write_folder(root: Path, size: int) -> Path:
    folder = root / "devhost_3002_20250109163000123_ascend_pt"
    out = folder / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    (folder / "profiler_info_0.json").write_text(json.dumps({"config": {"common_config": {
        "activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"]}, "experimental_config": {
        "_profiler_level": "Level1"}}}))
    t0 = 1736413971558932.912
    with (out / "trace_view.json").open("w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(m) for m in _meta()))
        written, k, step, t = f.tell(), 0, 1, t0
        while written < size:
            if k % 2000 == 0:
                f.write(",\n" + json.dumps({"name": f"ProfilerStep#{step}", "pid": HOST, "tid": HOST,
                                            "ts": f"{t:.3f}", "dur": 2000 * 60.0, "ph": "X", "cat": "cpu_op"}))
                step += 1
            f.write(",\n" + ",\n".join(_op(k, t)))
            k, t = k + 1, t + 60.0
            if k % 4096 == 0:
                written = f.tell()
        f.write("\n]\n")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="airctl-bench-trace-"))
    try:
        t = time.perf_counter()
        folder = write_folder(tmp, int(args.gib * (1 << 30)))
        size = (folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").stat().st_size
        print(f"trace_view.json: {size / (1 << 20):.0f} MiB written in {time.perf_counter() - t:.0f} s")
        env = {**os.environ, "PYTHONPATH": str(REPO), "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "airctl", "profile", "analyze", str(tmp), "--out",
                               str(tmp / "runs"), "--json"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, check=False)
        seconds = time.perf_counter() - t
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"profile analyze: exit {proc.returncode}, {seconds:.0f} s, peak RSS {peak_mib:.0f} MiB "
              f"(target < 500 MB)")
        if proc.returncode not in (0, 1):
            print(proc.stderr[-2000:])
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept: {tmp}")


if __name__ == "__main__":
    main()
