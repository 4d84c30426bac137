"""The sim ``torch_npu.profiler`` (airctl/sim/torch_npu/profiler.py): torch_npu's API and step
machine, the Ascend output layout, and the docs' ``prof.step()`` after the with-block."""

from __future__ import annotations

import csv
import json
import re
import warnings
from pathlib import Path

import pytest

from airctl.sim.torch_npu import profiler as P  # noqa: N812 - reads like torch_npu.profiler

FOLDER = re.compile(r"^.+_\d+_\d{17}_ascend_pt$")


def work() -> None:
    import torch

    x = torch.randn(3, 3)
    torch.mm(x, x).abs()


def new_profile(out: Path, **kwargs) -> P.profile:  # noqa: ANN003
    return P.profile(activities=[P.ProfilerActivity.NPU, P.ProfilerActivity.CPU],
                     on_trace_ready=P.tensorboard_trace_handler(str(out)), **kwargs)


def test_schedule_cycles_like_torch_npu() -> None:
    s = P.schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    assert [s(i).name for i in range(7)] == ["NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE", "NONE"]
    assert P.schedule is P.Schedule


@pytest.mark.parametrize("step_inside", [True, False])
def test_docs_pattern_writes_one_ascend_folder(tmp_path: Path, step_inside: bool) -> None:
    sched = P.schedule(wait=0, warmup=0, active=1, repeat=1, skip_first=0)
    config = P._ExperimentalConfig(profiler_level=P.ProfilerLevel.Level2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with new_profile(tmp_path, schedule=sched, with_stack=True, experimental_config=config) as prof:
            work()
            if step_inside:
                prof.step()
        if not step_inside:
            prof.step()  # as TorchAir's docs write it: after the with-block
    (folder,) = tmp_path.iterdir()
    assert FOLDER.match(folder.name)
    out = folder / "ASCEND_PROFILER_OUTPUT"
    assert {p.name for p in out.iterdir()} == {"trace_view.json", "kernel_details.csv", "op_statistic.csv",
                                               "step_trace_time.csv"}
    with open(out / "kernel_details.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["Name"] for r in rows] == ["aten::randn", "aten::mm", "aten::abs"]  # what the program called
    assert {r["Step Id"] for r in rows} == {"0"}
    json.loads((out / "trace_view.json").read_text())
    info = json.loads((folder / "profiler_info.json").read_text())
    assert info["simulated"] is True and info["experimental_config"]["profiler_level"] == "Level2"
    assert any("after the profiler stopped" in str(w.message) for w in caught) == (not step_inside)


def test_repeating_schedule_saves_one_folder_per_cycle(tmp_path: Path) -> None:
    with new_profile(tmp_path, schedule=P.schedule(wait=1, active=1, repeat=2)) as prof:
        for _ in range(5):
            work()
            prof.step()
    assert len(list(tmp_path.iterdir())) == 2
    assert prof.saved == sorted(tmp_path.iterdir(), key=lambda p: prof.saved.index(p))


def test_without_schedule_the_trace_is_saved_at_stop(tmp_path: Path) -> None:
    prof = new_profile(tmp_path)
    prof.start()
    work()
    prof.stop()
    (folder,) = tmp_path.iterdir()
    assert (folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").is_file()
    prof.export_chrome_trace(str(tmp_path / "again.json"))


def test_api_is_keyword_only_like_torch_npu() -> None:
    with pytest.raises(TypeError):
        P.profile([P.ProfilerActivity.CPU])  # type: ignore[misc]
    assert P.supported_activities() == {P.ProfilerActivity.CPU, P.ProfilerActivity.NPU}
