"""airctl/profile/ascend/folders.py: which folders DIR holds, their ranks, and what DIR may be."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from airctl.profile.ascend.folders import find_rank_folders
from airctl.profile.ascend.model import ProfileReadError
from tests.profile.ascend.conftest import PROFILES

TWO = PROFILES / "npu_two_ranks"


def test_ranks_come_from_profiler_info_not_the_folder_name() -> None:
    folders, notes = find_rank_folders(TWO)
    assert [(f.rank, f.path.name) for f in folders] == [(0, "devhost_3002_20250109163000456_ascend_pt"),
                                                       (1, "devhost_3001_20250109163000123_ascend_pt")]
    assert notes == []


@pytest.mark.parametrize("info, name, rank", [
    ({"rank_id": "3"}, "profiler_info_3.json", 3),  # from $RANK: a string
    ({"rank_id": 5}, "profiler_info_9.json", 5),  # torch.distributed: an int; the key wins over the name
    ({}, "profiler_info_2.json", 2),  # no key: the name
    ({"rank_id": -1}, "profiler_info.json", None),
    ({}, "profiler_info.json", None),  # single process
])
def test_rank_id_forms(tmp_path: Path, info: dict[str, object], name: str, rank: int | None) -> None:
    (tmp_path / "ASCEND_PROFILER_OUTPUT").mkdir()
    (tmp_path / name).write_text(json.dumps(info))
    ((f,), _) = find_rank_folders(tmp_path)
    assert f.rank == rank


def test_a_profiler_info_that_is_a_fifo_or_over_its_limit_reads_as_absent(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The small JSON files of a profiler folder are read no further than their limit, and never block."""
    import os

    from airctl.profile.ascend import folders

    (tmp_path / "ASCEND_PROFILER_OUTPUT").mkdir()
    info = tmp_path / "profiler_info_4.json"
    info.write_text(json.dumps({"rank_id": 7}))
    assert folders.json_object(info) == {"rank_id": 7}
    monkeypatch.setattr(folders, "PROFILE_META_BYTES", 8)
    assert folders.json_object(info) is None  # over the limit: as a file that is not JSON
    ((f,), _) = find_rank_folders(tmp_path)
    assert f.rank == 4  # the name's rank, as for an info file without the key
    monkeypatch.undo()
    info.unlink()
    os.mkfifo(info)  # nobody writes it: a read would block forever
    assert folders.json_object(info) is None


def test_dir_may_be_the_rank_folder_its_output_or_a_file_in_it(folder: Callable[..., Path]) -> None:
    rank = folder()
    out = rank / "ASCEND_PROFILER_OUTPUT"
    for given in (rank, out, out / "kernel_details.csv", out / "trace_view.json"):
        assert [f.path for f in find_rank_folders(given)[0]] == [rank]


def test_a_plain_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(ProfileReadError, match="notes.txt is a file, not a profiler folder"):
        find_rank_folders(tmp_path / "notes.txt")


def test_same_named_folders_in_different_places_are_different_ranks(tmp_path: Path) -> None:
    """One folder per node, same host name pattern: kept apart by path and rank."""
    src = next(TWO.iterdir())
    for node, rank in (("node-a", 0), ("node-b", 1)):
        dst = tmp_path / node / "worker_1_20250109163000123_ascend_pt"
        shutil.copytree(src, dst)
        for info in dst.glob("profiler_info_*.json"):
            info.unlink()
        (dst / f"profiler_info_{rank}.json").write_text(json.dumps({"rank_id": str(rank)}))
    folders, _ = find_rank_folders(tmp_path)
    assert [(f.rank, f.path.parent.name) for f in folders] == [(0, "node-a"), (1, "node-b")]


def test_unparsed_folders_are_named(tmp_path: Path, folder: Callable[..., Path]) -> None:
    raw = tmp_path / "raw" / "h_1_20250101000000000_ascend_pt"
    (raw / "PROF_000001_20250101000000000_ABCDEFGHIJKLMNOP").mkdir(parents=True)
    (raw / "profiler_info.json").write_text("{}")
    with pytest.raises(ProfileReadError, match="no parsed profiler folder"):
        find_rank_folders(tmp_path / "raw")
    shutil.copytree(folder(), tmp_path / "raw" / "h_2_20250101000000000_ascend_pt")
    folders, notes = find_rank_folders(tmp_path / "raw")
    assert len(folders) == 1 and "not parsed yet" in notes[0]
