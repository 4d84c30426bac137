"""Acceptance 3 of issue 33: no command's terminal output carries a raw control character or interpreted
rich markup taken from input data. Names in a graph (stream, op), a file name and the ledger path hold an
OSC sequence, ESC, BEL, rich markup and an emoji code; every command that shows them is run in-process and
its stdout and stderr are checked. SVG/HTML outputs must stay well-formed XML."""

from __future__ import annotations

import re
import xml.dom.minidom
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from tests.conftest import REPO
from tests.faults.in_process import no_traceback

runner = CliRunner()
HOSTILE = "\x1b]0;owned\x07[red]x[bold]:thumbs_up:\x1b[31m"  # no "/": it also names files
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what must never reach a terminal from data
SOURCE = REPO / "fixtures" / "checks" / "dumps" / "similar_stream_labels.txt"


def airctl(*args: object):  # noqa: ANN201
    return runner.invoke(build_app(), [str(a) for a in args])


def clean(result, *codes: int) -> str:  # noqa: ANN001
    """The command's stdout + stderr, checked: an expected exit code, no traceback, no raw control character,
    no emoji rendered from data."""
    text = no_traceback(result, *codes)
    assert not RAW.search(text), repr(RAW.search(text).group()) + " in " + repr(text[:3000])
    assert "\U0001f44d" not in text, "an emoji code in data was rendered"
    return text


def hostile_dump(folder: Path) -> Path:
    escaped = HOSTILE.replace("\x1b", "\\033").replace("\x07", "\\007")
    text = SOURCE.read_text().replace('s: "stream_1"', f's: "stream_1{escaped}"')
    for old in ('name: "Abs"', '"Abs:0"', '"Abs:-1"'):
        text = text.replace(old, old.replace("Abs", f"Abs{escaped}"))
    path = folder / f"g{HOSTILE}.txt"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("hostile")
    dump = hostile_dump(base)
    out = base / "runs[red]"
    text = clean(airctl("import", dump, "--out", out), 0)
    assert "[red]x[bold]:thumbs_up:" in text  # the file name, markup shown as typed
    (root,) = [p for p in out.iterdir() if p.is_dir()]
    return out, root


@pytest.mark.parametrize("args", [
    ["show"], ["show", "--all"], ["runs"],
    ["dump"], ["dump", "--type", "fx"], ["dump", "--type", "txt"], ["dump", "--type", "json"],
    ["check"], ["check", "--json"], ["diff"],
])
def test_commands_on_a_ledger_with_hostile_names(ledger: tuple[Path, Path], args: list[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    out, _root = ledger
    monkeypatch.setenv("AIRCTL_OUT", str(out))
    clean(airctl(*args), 0, 1)


@pytest.mark.parametrize("kind", ["lanes", "svg", "html"])
def test_pictures_of_hostile_names_are_well_formed(ledger: tuple[Path, Path], tmp_path: Path, kind: str) -> None:
    _out, root = ledger
    target = tmp_path / f"pic.{kind if kind != 'lanes' else 'svg'}"
    clean(airctl("dump", root, "--type", kind, "-o", target), 0)
    text = target.read_text(encoding="utf-8")
    assert not RAW.search(text.replace("\n", "").replace("\t", "").replace("\r", ""))
    if target.suffix == ".svg":
        xml.dom.minidom.parseString(text)  # well-formed: browsers open it


def test_errors_name_hostile_paths_as_typed(tmp_path: Path) -> None:
    missing = tmp_path / "[red]gone[/red]:thumbs_up:\x1b]0;t\x07.pbtxt"
    text = clean(airctl("dump", missing), 2)
    assert "[red]gone[/red]:thumbs_up:" in text and "\\x1b]0;t\\x07" in text


def test_profile_analyze_of_hostile_op_names(tmp_path: Path) -> None:
    """Op and lane names from a profiler's trace: escaped on the terminal, well-formed in timeline.svg."""
    import json
    import shutil

    folder = tmp_path / "prof"
    shutil.copytree(REPO / "fixtures" / "profiles" / "npu_trace_only", folder)
    (trace,) = folder.glob("*/ASCEND_PROFILER_OUTPUT/trace_view.json")
    events = json.loads(trace.read_text())
    for e in events:
        if e.get("ph") == "X" and not e["name"].startswith("ProfilerStep"):
            e["name"] += HOSTILE
        if e.get("name") == "thread_name":
            e["args"]["name"] += "\x1b[31m\x07"
    trace.write_text(json.dumps(events))
    out = tmp_path / "runs"
    clean(airctl("profile", "analyze", folder, "--out", out), 0)
    (svg,) = out.glob("*/profile/timeline.svg")
    xml.dom.minidom.parseString(svg.read_text(encoding="utf-8"))
