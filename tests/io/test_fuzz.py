"""Acceptance 6: malformed, truncated and binary input raise GraphReadError (with file and line), nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airctl.errors import GraphReadError
from airctl.io.read import read_graph
from tests.io.dumps import DUMPS, FX_AFTER, GE_DUMPS, PY_DUMPS

SEEDS = [(p.suffix, p.read_bytes()) for p in GE_DUMPS + PY_DUMPS + [FX_AFTER]]
SUFFIXES = [".pbtxt", ".txt", ".py", ".json", ".dump"]


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where mutated inputs are written: pytest's own temporary tree, which it prunes (a module-scoped
    folder, as hypothesis runs many examples per test call)."""
    return tmp_path_factory.mktemp("fuzz")


def _check(folder: Path, data: bytes, suffix: str) -> None:
    path = folder / f"g{suffix}"
    path.write_bytes(data)
    try:
        read_graph(path)
    except GraphReadError as e:
        assert e.file == str(path)
        assert e.line is None or (isinstance(e.line, int) and e.line >= 1)


@st.composite
def mutated(draw) -> tuple[bytes, str]:
    suffix, data = draw(st.sampled_from(SEEDS))
    ops = draw(st.lists(st.tuples(st.sampled_from(["cut", "flip", "delete", "insert", "dup"]),
                                  st.integers(0, len(data)), st.integers(0, 255)), min_size=1, max_size=4))
    buf = bytearray(data)
    for op, pos, byte in ops:
        pos = min(pos, len(buf))
        if op == "cut":
            del buf[pos:]
        elif op == "flip" and pos < len(buf):
            buf[pos] = byte
        elif op == "delete":
            del buf[pos:pos + byte % 16 + 1]
        elif op == "insert":
            buf[pos:pos] = bytes([byte]) if byte % 3 else b"{\"'\\:\n#^"[byte % 9:byte % 9 + 2]
        elif op == "dup":
            buf[pos:pos] = buf[pos:pos + byte]
    keep_suffix = draw(st.booleans())
    return bytes(buf), suffix if keep_suffix else draw(st.sampled_from(SUFFIXES))


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_dumps_raise_only_graph_read_error(fuzz_dir: Path, case: tuple[bytes, str]) -> None:
    _check(fuzz_dir, *case)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.sampled_from(SUFFIXES))
def test_random_bytes_raise_only_graph_read_error(fuzz_dir: Path, data: bytes, suffix: str) -> None:
    _check(fuzz_dir, data, suffix)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='node{}:"\'\\^#attr key value s input op name\n0123456789[]<>,;-.', max_size=300),
       st.sampled_from(SUFFIXES))
def test_token_soup_raises_only_graph_read_error(fuzz_dir: Path, text: str, suffix: str) -> None:
    _check(fuzz_dir, text.encode("utf-8"), suffix)


def test_every_truncation_of_a_pbtxt_dump_reports_a_line(fuzz_dir: Path) -> None:
    data = (DUMPS / "stream" / "original.pbtxt").read_bytes()
    for cut in range(1, len(data), 97):
        path = fuzz_dir / "cut.pbtxt"
        path.write_bytes(data[:cut])
        try:
            read_graph(path)
        except GraphReadError as e:
            assert e.line is not None
