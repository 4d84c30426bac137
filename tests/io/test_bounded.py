"""Readers of untrusted dumps use bounded memory: a 200 MB attribute under a 1 GB address-space limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BIG = 200 * 2**20
PROBE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
sys.path.insert(0, {repo!r})
from airctl.io.read import read_graph
g = read_graph(sys.argv[1])
attrs = [n.attrs.get("huge") for n in g.nodes if "huge" in n.attrs]
print(len(g), len(str(attrs[0])), g.attrs.get("airctl_elided"))
"""


def _with_huge_attr(path: Path, fmt: str) -> Path:
    """A real dump with one 200 MB string attribute added to its first node, written in pieces."""
    src = (REPO / "fixtures" / "dumps" / "plain" / f"original.{fmt}").read_text()
    if fmt == "pbtxt":
        cut = src.index("    attr {")
        head, tail = src[:cut], src[cut:]
        start, end = "    attr {\n        key: \"huge\"\n        value {\n            s: '", "'\n        }\n    }\n"
    else:
        cut = src.index("  attr {")
        head, tail = src[:cut], src[cut:]
        start, end = '  attr {\n    key: "huge"\n    value {\n      s: "', '"\n    }\n  }\n'
    with path.open("w", encoding="utf-8") as f:
        f.write(head + start)
        chunk = "abcdefgh" * (1 << 17)  # 1 MiB
        for _ in range(BIG // len(chunk)):
            f.write(chunk)
        f.write(end + tail)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["pbtxt", "txt"])
def test_a_200mb_attribute_reads_in_under_1gb(tmp_path: Path, fmt: str) -> None:
    dump = _with_huge_attr(tmp_path / f"huge.{fmt}", fmt)
    assert dump.stat().st_size > BIG
    proc = subprocess.run([sys.executable, "-c", PROBE.format(repo=str(REPO)), str(dump)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    nodes, kept, elided = proc.stdout.split(maxsplit=2)
    assert int(nodes) > 0 and int(kept) < 2 * 2**20  # the attribute is there, cut short and marked
    assert "bytes" in elided and str(BIG - 2**20) in elided
