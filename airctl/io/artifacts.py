"""Find what TorchAir left in the folders a user brings from an NPU machine, and say what each file is.

``airctl import DIR|FILE...`` starts here. Files are told apart by name where TorchAir's naming
is fixed, else by their first bytes (reference/torchair.md §3.3, §5; notes in docs/import.md):

- GE dumps ``dynamo_{original,optimized}_graph_<N>_rank_<R>_pid_<P>_ts_<T>.{pbtxt,txt,py}``
  (``config.debug.graph_dump``; rank and pid from the name);
- TORCH_COMPILE_DEBUG runs ``run_<stamp>-pid_<P>[-rank_<R>]/torchair/model__<K>/`` with
  ``dynamo_out_graph.txt`` and ``<phase>/NNN_aot_<phase>_<what>.<ext>`` stage files, and the
  run's ``torchair/debug.log`` (:class:`TcdRun`); npugraph_ex writes the same layout under
  ``npugraph_ex/`` (``model__<K>``, or ``compile__<K>`` through ``compile_fx``);
- TorchAir logs (stdout captures, ``debug.log``): any file whose first lines hold a
  ``[LEVEL] TORCHAIR(pid,exe):`` record, or Dynamo's ``TORCH_LOGS=graph_breaks,recompiles`` lines
  (``airctl why``: :mod:`airctl.io.why_log`);
- ``graph():`` listings and ``print_readable`` FX code saved on their own;
- profiler folders ``*_ascend_pt`` (listed, not read: ``airctl profile analyze`` reads them);
- TORCH_TRACE logs (``dedicated_log_torch_trace*.log``, read by tlparse).

The walk never follows links out of the given folders, and stops at :data:`MAX_FILES` files.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from airctl.errors import GraphReadError
from airctl.io.compressed import read_head
from airctl.io.fx_code import is_fx_code
from airctl.io.fx_listing import is_fx_listing
from airctl.io.log_records import is_torchair_log
from airctl.io.why_log import is_dynamo_log
from airctl.ledger_files import is_ledger

MAX_FILES = 200_000
# TorchAir's dump names (a ledger keeps them gzip-compressed, .gz)
DUMP_NAME = re.compile(r"^dynamo_(?P<which>original|optimized)_(?P<graph>graph_\d+)(?:_rank_(?P<rank>\d+))?"
                       r"(?:_pid_(?P<pid>\d+))?(?:_ts_(?P<ts>\d+))?\.(?P<type>pbtxt|txt|py)(?:\.gz)?$")
TCD_RUN = re.compile(r"^run_[\d_]+-pid_(?P<pid>\d+)(?:-rank_(?P<rank>\d+))?$")
TCD_MODEL = re.compile(r"^(?:model|compile)__(?P<k>\d+)$")  # compile__K: npugraph_ex's compile_fx calls
TCD_PACKAGES = ("torchair", "npugraph_ex")  # the run's sub-folder each compiler writes
TCD_STAGE = re.compile(r"^(?P<nnn>\d{3,})_aot_(?P<phase>\w+?)_(?P<what>graph|graph_after_.+|original_ge_graph|"
                       r"optimized_ge_graph)\.(?P<ext>txt|pbtxt|py)$")
TRACE_NAME = re.compile(r"^dedicated_log_torch_trace(?:_rank_(?P<rank>\d+))?_\w+\.log$")


@dataclass
class GeDump:
    path: Path
    which: str  # original | optimized
    graph: str  # graph_N
    type: str  # pbtxt | txt | py
    rank: int | None = None
    pid: int | None = None


@dataclass
class TcdFile:
    path: Path
    nnn: int
    phase: str
    what: str  # graph (the AOT graph), graph_after_<pass>, original_ge_graph, optimized_ge_graph
    ext: str

    @property
    def pass_name(self) -> str | None:
        return self.what[len("graph_after_"):] if self.what.startswith("graph_after_") else None


@dataclass
class TcdModel:
    path: Path
    k: int  # model__<k>: TorchAir's count of Dynamo graphs, from 0
    dynamo: Path | None = None
    phases: dict[str, list[TcdFile]] = field(default_factory=dict)  # in NNN order
    output_code: Path | None = None  # reduce-overhead, npugraph_ex: the generated aclgraph code
    package: str = "torchair"  # the compiler that wrote it: torchair, or npugraph_ex (its mode)


@dataclass
class TcdRun:
    path: Path
    pid: int | None = None
    rank: int | None = None
    models: list[TcdModel] = field(default_factory=list)
    debug_log: Path | None = None


@dataclass
class ArtifactSet:
    logs: list[Path] = field(default_factory=list)
    listings: list[Path] = field(default_factory=list)
    fx_code: list[Path] = field(default_factory=list)
    dumps: list[GeDump] = field(default_factory=list)
    graph_files: list[Path] = field(default_factory=list)  # other graph files (renamed dumps, airctl JSON)
    tcd_runs: list[TcdRun] = field(default_factory=list)
    profiles: list[Path] = field(default_factory=list)
    traces: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    @property
    def empty(self) -> bool:
        return not (self.logs or self.listings or self.fx_code or self.dumps or self.graph_files or self.tcd_runs)


def read_tcd_model(path: Path) -> TcdModel:
    m = TCD_MODEL.match(path.name)
    model = TcdModel(path, int(m["k"]) if m else 0)
    for child in sorted(path.iterdir()):
        if child.name == "dynamo_out_graph.txt" and child.is_file():
            model.dynamo = child
        elif child.name == "output_code.py" and child.is_file():
            model.output_code = child
        elif child.is_dir() and not child.is_symlink():
            files = []
            for f in child.iterdir():
                sm = TCD_STAGE.match(f.name)
                if sm and f.is_file():
                    files.append(TcdFile(f, int(sm["nnn"]), sm["phase"], sm["what"], sm["ext"]))
                elif f.name == "output_code.py" and f.is_file():
                    model.output_code = f
            if files:
                model.phases[child.name] = sorted(files, key=lambda t: t.nnn)
    return model


def read_tcd_run(path: Path) -> TcdRun:
    """A ``run_*`` folder (or its ``torchair/`` or ``npugraph_ex/`` sub-folder, or one ``model__K`` folder)."""
    m = TCD_RUN.match(path.name)
    run = TcdRun(path, int(m["pid"]) if m else None, int(m["rank"]) if m and m["rank"] else None)
    if TCD_MODEL.match(path.name):
        model = read_tcd_model(path)
        model.package = path.parent.name if path.parent.name in TCD_PACKAGES else "torchair"
        run.models.append(model)
        return run
    folders = [path / p for p in TCD_PACKAGES if (path / p).is_dir()] or [path]
    for folder in folders:
        for child in sorted(folder.iterdir(), key=lambda p: (len(p.name), p.name)):
            if child.is_dir() and TCD_MODEL.match(child.name) and not child.is_symlink():
                model = read_tcd_model(child)
                model.package = folder.name if folder.name in TCD_PACKAGES else "torchair"
                run.models.append(model)
        if run.debug_log is None and (folder / "debug.log").is_file():
            run.debug_log = folder / "debug.log"
    return run


def _is_tcd(path: Path) -> bool:
    if TCD_RUN.match(path.name) and any((path / p).is_dir() for p in TCD_PACKAGES):
        return True
    if path.name in TCD_PACKAGES and any(TCD_MODEL.match(c.name) for c in path.iterdir() if c.is_dir()):
        return True
    return bool(TCD_MODEL.match(path.name)) and path.is_dir()


def classify_file(path: Path, found: ArtifactSet) -> None:
    name = path.name
    if m := DUMP_NAME.match(name):
        if "\0" in read_head(path, 8192):  # TorchAir's dumps are text: binary data under its name is not one
            found.skipped.append((str(path), "binary data, not a TorchAir dump"))
            return
        found.dumps.append(GeDump(path, m["which"], m["graph"], m["type"], int(m["rank"]) if m["rank"] else None,
                                  int(m["pid"]) if m["pid"] else None))
        return
    if TRACE_NAME.match(name):
        found.traces.append(path)
        return
    head = read_head(path)
    if "\0" in head:
        found.skipped.append((str(path), "binary"))
    elif is_torchair_log(head) or is_dynamo_log(head):
        found.logs.append(path)
    elif is_fx_listing(head):
        found.listings.append(path)
    elif is_fx_code(head):
        found.fx_code.append(path)
    elif path.suffix in (".pbtxt", ".txt", ".json", ".py") and _looks_like_graph(head):
        found.graph_files.append(path)
    else:
        found.skipped.append((str(path), "not a TorchAir artifact"))


def _looks_like_graph(head: str) -> bool:
    from airctl.io.read import sniff

    return sniff(head) is not None


def discover(paths: list[Path]) -> ArtifactSet:
    """Everything airctl can import under ``paths`` (files or folders)."""
    found = ArtifactSet()
    count = 0
    for root in paths:
        if not root.exists():
            raise GraphReadError("no such file or folder", file=str(root))
        if root.is_file():
            classify_file(root, found)
            continue
        if root.name.endswith("_ascend_pt"):
            found.profiles.append(root)
            continue
        if _is_tcd(root):
            found.tcd_runs.append(read_tcd_run(root))
            continue
        for folder, dirs, files in os.walk(root, followlinks=False):
            here = Path(folder)
            keep = []
            for d in sorted(dirs):
                sub = here / d
                if sub.is_symlink():
                    found.skipped.append((str(sub), "link or special file"))
                elif is_ledger(sub):
                    found.skipped.append((str(sub), "an airctl ledger (open it directly, it is one already)"))
                elif d.endswith("_ascend_pt"):
                    found.profiles.append(sub)
                elif _is_tcd(sub):
                    found.tcd_runs.append(read_tcd_run(sub))
                elif d not in ("torchdynamo", "__pycache__") and not d.startswith("."):
                    keep.append(d)
            dirs[:] = keep
            for f in sorted(files):
                count += 1
                if count > MAX_FILES:
                    raise GraphReadError(f"more than {MAX_FILES} files under the folder", file=str(root),
                                         hint="import the folders that hold TorchAir's output, not a whole disk")
                path = here / f
                if path.is_symlink() or not path.is_file():
                    found.skipped.append((str(path), "link or special file"))
                    continue
                classify_file(path, found)
    return found
