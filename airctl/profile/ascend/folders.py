"""Which profiler folders DIR holds, which rank each belongs to, and which one speaks for a rank.

torch_npu writes one ``<host>_<pid>_<YYYYmmddHHMMSSmmm>_ascend_pt`` folder per process and per
schedule cycle, side by side in the directory given to ``tensorboard_trace_handler`` (one per
node on a cluster). A rank is read from ``profiler_info*.json``: its ``rank_id`` (a string when it
came from ``$RANK``, an int from ``torch.distributed``), else the ``_N`` of ``profiler_info_N.json``;
never from the folder name. Several folders of one rank (several cycles): the newest by the
stamp in the name (then ``collectionTimeEnd``, then modification time) is used, with a note.
Folders are kept apart by their path, so same-named folders in different places stay distinct.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.limits import PROFILE_META_BYTES
from airctl.profile.ascend.model import ProfileReadError
from airctl.safe_files import read_regular

OUTPUT = "ASCEND_PROFILER_OUTPUT"
KNOWN_FILES = ("kernel_details.csv", "trace_view.json", "step_trace_time.csv", "op_statistic.csv", "analysis.db")
STAMP = re.compile(r"_(\d{14}(?:\d{3})?)_ascend_pt$")
INFO = re.compile(r"^profiler_info(?:_(\d+))?\.json$")
MAX_DEPTH = 4  # DIR/<node>/<run>/<rank folder>/ASCEND_PROFILER_OUTPUT
HINT = "pass the directory given to tensorboard_trace_handler, or one *_ascend_pt folder in it"


@dataclass
class RankFolder:
    path: Path
    rank: int | None
    info: dict[str, Any] = field(default_factory=dict)
    stamp: str = ""  # the folder name's timestamp, YYYYmmddHHMMSSmmm
    parsed: bool = True  # has ASCEND_PROFILER_OUTPUT

    @property
    def output(self) -> Path:
        return self.path / OUTPUT

    def recency(self) -> tuple[str, int, float, str]:
        end = self.info.get("end_info", {}) if isinstance(self.info.get("end_info"), dict) else {}
        collected = end.get("collectionTimeEnd")
        mtime = self.output.stat().st_mtime if self.output.exists() else 0.0
        return (self.stamp.ljust(17, "0"), collected if isinstance(collected, int) else 0, mtime, str(self.path))


def find_rank_folders(path: Path) -> tuple[list[RankFolder], list[str]]:
    """One folder per rank (ranks ascending; ``None`` — no rank recorded — first), and notes."""
    path = Path(path)
    if not path.exists():
        raise ProfileReadError("no such folder", file=str(path), hint=HINT)
    if path.is_file():
        if path.parent.name == OUTPUT and (path.name in KNOWN_FILES or path.suffix == ".db"):
            path = path.parent.parent
        else:
            raise ProfileReadError(f"{path.name} is a file, not a profiler folder", file=str(path), hint=HINT)
    if path.name == OUTPUT:
        path = path.parent
    candidates = [path] if _is_profile(path) else _search(path)
    if not candidates:
        raise ProfileReadError(f"no {OUTPUT} folder in here", file=str(path),
                               hint="pass a torch_npu profiler output folder (<host>_<pid>_<stamp>_ascend_pt); "
                                    "on an NPU, profiles are parsed into it when the profiler stops")
    notes = []
    folders = [_folder(p) for p in candidates]
    for f in folders:
        if not f.parsed:
            notes.append(f"{f.path} has no {OUTPUT} (not parsed yet): run torch_npu.profiler.profiler.analyse on it")
    folders = [f for f in folders if f.parsed]
    if not folders:
        raise ProfileReadError(f"no parsed profiler folder in here ({len(candidates)} unparsed)", file=str(path),
                               hint="parse them first: torch_npu.profiler.profiler.analyse(<folder>)")
    by_rank: dict[int | None, list[RankFolder]] = {}
    for f in folders:
        by_rank.setdefault(f.rank, []).append(f)
    chosen = []
    for rank, group in sorted(by_rank.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
        group.sort(key=RankFolder.recency)
        chosen.append(group[-1])
        if len(group) > 1:
            who = "without a rank id" if rank is None else f"of rank {rank}"
            notes.append(f"{len(group)} profiler folders {who}; analysing the newest: {group[-1].path}")
    return chosen, notes


def _is_profile(path: Path) -> bool:
    return (path / OUTPUT).is_dir() or any(INFO.match(p.name) for p in _listdir(path))


def _listdir(path: Path) -> list[Path]:
    try:
        return list(path.iterdir())
    except OSError:
        return []


def _search(root: Path) -> list[Path]:
    found = []
    for here, dirs, _files in os.walk(root, followlinks=False):
        depth = len(Path(here).relative_to(root).parts)
        if Path(here) != root and _is_profile(Path(here)):
            found.append(Path(here))
            dirs.clear()
        elif depth >= MAX_DEPTH:
            dirs.clear()
        dirs.sort()
    return found


def json_object(path: Path, errors: str = "strict") -> dict[str, Any] | None:
    """The JSON object in the regular file ``path``, best effort: None when it is missing, unreadable, over
    :data:`~airctl.limits.PROFILE_META_BYTES` (nothing past it is read), not JSON or not an object
    (``errors``: for bytes that are not UTF-8, as ``bytes.decode`` takes it)."""
    try:
        raw = read_regular(path, PROFILE_META_BYTES, error=ProfileReadError, what="profiler JSON file")
        data = json.loads(raw.decode("utf-8", errors=errors))
    except (OSError, ValueError, RecursionError, ProfileReadError):
        return None
    return data if isinstance(data, dict) else None


def _folder(path: Path) -> RankFolder:
    info_files = sorted((p for p in _listdir(path) if INFO.match(p.name)), key=lambda p: p.name)
    info: dict[str, Any] = {}
    rank = None
    for p in info_files:
        data = json_object(p, errors="replace")
        if data is not None:
            info = data
            rank = _rank(data.get("rank_id"))
        named = INFO.match(p.name).group(1)  # type: ignore[union-attr]
        if rank is None and named is not None:
            rank = int(named)
        if info:
            break
    stamp = STAMP.search(path.name)
    return RankFolder(path, rank, info, stamp.group(1) if stamp else "", (path / OUTPUT).is_dir())


def _rank(value: Any) -> int | None:
    """``rank_id`` as written: "3" (from $RANK) or 3; -1 or junk means none."""
    try:
        rank = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return rank if rank >= 0 else None


def level_of(info: dict[str, Any]) -> str | None:
    """The export level (``Level0``/``Level1``/``Level2``/``Level_none``) profiler_info records."""
    config = info.get("config")
    exp = config.get("experimental_config") if isinstance(config, dict) else None
    level = exp.get("_profiler_level") if isinstance(exp, dict) else None
    return str(level) if level else None
