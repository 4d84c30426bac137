"""Issue 47, items 1-3 and 10: inputs with no end, alias bombs, catastrophic patterns, huge files.

Each reproduction of the audit ends with a clear error naming the file (exit 2), at once, in
bounded memory. Every one that could take the machine's memory before the fix runs as a child
under an address-space cap (:mod:`tests.faults.bounded`), so a regression fails the test instead
of the host. Limits are the table of ``airctl/limits.py`` (docs/reliability.md "Limits").
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from airctl.errors import SpecError
from airctl.limits import PASS_FILE_BYTES
from airctl.passes.spec import load, parse_text
from tests.conftest import MODELS
from tests.faults.bounded import RSS_LIMIT_MB, airctl_capped, python_capped

BOMB = ('a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
        + "version: 1\npasses: []\n")  # 9**9 nodes from 700 bytes


def _endless(path: Path, kind: str) -> Path | str:
    """An input that never ends: ``/dev/zero`` (a device), or a FIFO made at ``path`` that nobody writes."""
    if kind == "device":
        return "/dev/zero"
    os.mkfifo(path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_an_endless_model_script_is_refused_at_once_in_bounded_memory(tmp_path: Path, kind: str) -> None:
    script = _endless(tmp_path / "model.py", kind)
    ended = airctl_capped("compile", script, "--out", tmp_path / "runs", cwd=tmp_path, timeout=90)
    assert not ended.timed_out, ended.text[-2000:]
    assert ended.returncode == 2, ended.text[-2000:]
    assert "not a regular file (a character device)" in ended.stderr if kind == "device" else \
        "not a regular file (a FIFO)" in ended.stderr, ended.stderr[-2000:]
    assert "internal error" not in ended.text and ended.rss_mb < RSS_LIMIT_MB, (ended.rss_mb, ended.text[-2000:])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_an_endless_pass_file_is_refused_at_once_in_bounded_memory(tmp_path: Path, kind: str) -> None:
    passes = _endless(tmp_path / "passes.yaml", kind)
    ended = airctl_capped("compile", MODELS / "seed.py", "--passes", passes, "--out", tmp_path / "runs",
                          cwd=tmp_path, timeout=120)
    assert not ended.timed_out, ended.text[-2000:]
    assert ended.returncode == 2, ended.text[-2000:]
    assert "not a regular file" in ended.stderr and str(passes) in ended.stderr, ended.stderr[-2000:]
    assert ended.rss_mb < RSS_LIMIT_MB, ended.rss_mb


def test_a_pass_file_over_its_limit_is_refused_from_its_size_without_parsing(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("version: 1\npasses:\n" + "  - {name: p, kind: record, after: {target: x}}\n" * (
        PASS_FILE_BYTES // 40))  # 5 MB: 49 s and 972 MB before
    started = time.monotonic()
    with pytest.raises(SpecError, match="too large for a pass file: over 4 MB") as e:
        load(big)
    assert e.value.file == str(big) and time.monotonic() - started < 1.0


def test_a_yaml_alias_bomb_is_refused_in_milliseconds(tmp_path: Path) -> None:
    code = ("from airctl.passes.spec import parse_text\nfrom airctl.errors import SpecError\n"
            f"try:\n    parse_text({BOMB!r})\nexcept SpecError as e:\n    print('refused', e.line, e.message)\n")
    ended = python_capped(code, cwd=tmp_path, timeout=60)  # before: 2.6 GB after 30 s, and growing
    assert not ended.timed_out and ended.returncode == 0, ended.text[-2000:]
    assert ended.stdout.startswith("refused 6 the YAML expands past 400,000 nodes"), ended.text
    assert ended.rss_mb < RSS_LIMIT_MB and ended.seconds < 30


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(SpecError, match="inside the node its anchor names") as e:
        parse_text("version: 1\npasses: &p [*p]\n")
    assert e.value.line == 2


def test_anchors_that_share_a_selector_still_work() -> None:
    spec = parse_text("version: 1\npasses:\n  - {name: a, kind: record, after: &mm {target: aten.mm.default}}\n"
                      "  - {name: b, kind: record, after: *mm}\n")
    assert [p.selectors["after"].target for p in spec.passes] == [["aten.mm.default"], ["aten.mm.default"]]


def test_a_catastrophic_name_pattern_on_a_long_node_name_ends_in_linear_time(tmp_path: Path) -> None:
    code = ("import time\n"
            "from airctl.passes.select import NodeInfo, field_matches\n"
            "from airctl.passes.spec import Selector\n"
            "info = NodeInfo(None, 'a' * 5000 + '!', 'aten.mm.default', 'call_function', 0)\n"
            "t = time.monotonic()\n"
            "bad, fine = Selector(name='(a+)+$'), Selector(name='(a|aa)*!')\n"
            "print(field_matches(bad, info, 'name'), field_matches(fine, info, 'name'), time.monotonic() - t)\n")
    ended = python_capped(code, cwd=tmp_path, timeout=60)  # before: never finished, Ctrl-C ignored (re's C loop)
    assert not ended.timed_out, "the match did not end"
    assert ended.returncode == 0 and ended.stdout.split()[:2] == ["False", "True"], ended.text[-2000:]


@pytest.mark.parametrize("pattern, why", [
    (r"(a)\1", "a backreference"), (r"(?=mm)mm", "a lookahead"), ("a" * 1001, "longer than 1000"),
    (r"(?:(?:a{100}){100}){100}", "states")])
def test_a_name_pattern_that_needs_backtracking_or_explodes_is_refused_when_the_file_is_read(
        pattern: str, why: str) -> None:
    with pytest.raises(SpecError, match="not a valid regular expression for airctl") as e:
        parse_text(f"version: 1\npasses:\n  - {{name: a, kind: record, after: {{name: '{pattern}'}}}}\n")
    assert why in e.value.message and e.value.line == 3


def test_a_csv_header_of_a_million_columns_is_one_short_error(tmp_path: Path) -> None:
    from airctl.profile.ascend.model import Issues, ProfileReadError
    from airctl.profile.ascend.table import read_table

    table = tmp_path / "op_summary.csv"
    table.write_text(",".join(f"c{i}" for i in range(1_000_000)) + "\n1,2\n")  # was an 8.9 MB message
    with pytest.raises(ProfileReadError, match="its header has 1,000,000 columns") as e:
        read_table(table, Issues())
    assert len(str(e.value)) < 400 and e.value.line == 1


def test_a_150_mb_index_is_refused_from_its_size_and_the_other_runs_listed(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from airctl.cli.app import build_app
    from airctl.ledger.runs import list_runs
    from tests.conftest import REPO

    out = tmp_path / "runs"
    dump = REPO / "fixtures" / "checks" / "dumps" / "similar_stream_labels.txt"
    for _ in range(2):
        assert CliRunner().invoke(build_app(), ["import", str(dump), "--out", str(out), "--no-report"]).exit_code == 0
    big = sorted(p for p in out.iterdir() if p.is_dir())[0] / "index.json"
    with open(big, "r+b") as f:
        f.truncate(150 << 20)  # sparse: 150 MB that take no disk (read whole before: 480 MB)
    started = time.monotonic()
    rows = {r.id: r for r in list_runs(out)}
    assert time.monotonic() - started < 2.0
    assert rows[big.parent.name].status == "unreadable"
    assert "too large for a run index (index.json): over 64 MB" in rows[big.parent.name].error
    assert sum(r.status == "ok" for r in rows.values()) == 1
