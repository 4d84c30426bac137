"""Untrusted FX text (listings, print_readable code, TorchAir logs): mutated input raises only GraphReadError."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airctl.errors import GraphReadError
from airctl.io.read import read_graph
from airctl.verify.inputs import load_targets

REPO = Path(__file__).resolve().parents[2]
LISTING = (REPO / "fixtures" / "checks" / "listings" / "nested_stream_scopes.txt").read_bytes()
CODE = next((REPO / "fixtures" / "imports" / "ma_tcd").rglob("001_aot_forward_graph_after_*.txt")).read_bytes()
LOG = b"\n".join((REPO / "fixtures" / "imports" / "ma_txt" / "train.log").read_bytes().split(b"\n")[:120])


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where mutated inputs are written: pytest's own temporary tree, which it prunes (a module-scoped
    folder, as hypothesis runs many examples per test call)."""
    return tmp_path_factory.mktemp("fuzz")


@st.composite
def mutated(draw) -> tuple[bytes, str]:  # noqa: ANN001
    name, data = draw(st.sampled_from([("fx.txt", LISTING), ("stage.txt", CODE), ("debug.log", LOG)]))
    buf = bytearray(data)
    for op, pos, byte in draw(st.lists(st.tuples(st.sampled_from(["cut", "flip", "delete", "insert"]),
                                                 st.integers(0, len(data)), st.integers(0, 255)),
                                       min_size=1, max_size=4)):
        pos = min(pos, len(buf))
        if op == "cut":
            del buf[pos:]
        elif op == "flip" and pos < len(buf):
            buf[pos] = byte
        elif op == "delete":
            del buf[pos:pos + byte % 16 + 1]
        else:
            buf[pos:pos] = b"([{%,: ')]}\n"[byte % 11:byte % 11 + 1 + byte % 3]
    return bytes(buf), name


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_fx_text_raises_only_graph_read_error(fuzz_dir: Path, case: tuple[bytes, str]) -> None:
    data, name = case
    path = fuzz_dir / name
    path.write_bytes(data)
    for read in (read_graph, load_targets):
        try:
            read(path)
        except GraphReadError as e:
            assert e.file is not None and (e.line is None or e.line >= 1)
