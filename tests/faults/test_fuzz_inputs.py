"""Fuzzing (issue 18): YAML pass files and profiler folders, mutated at random, give clean errors only — an
AirctlError with the file (and line where the format has one) — within bounded time per input. Graph files
(pbtxt, txt, py, json, FX listings) are fuzzed in tests/io/test_fuzz*.py."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airctl.errors import AirctlError
from tests.conftest import REPO

YAMLS = sorted((REPO / "passes").glob("*.yaml")) + sorted((REPO / "fixtures" / "passes").glob("*.yaml"))
YAML_SEEDS = [p.read_bytes() for p in YAMLS]
PROFILE = REPO / "fixtures" / "profiles" / "npu_level1"
PROFILE_FILES = sorted(p for p in PROFILE.rglob("*") if p.is_file() and p.suffix in (".csv", ".json"))
SETTINGS = settings(max_examples=150, deadline=3000, derandomize=True, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where mutated inputs are written: pytest's own temporary tree, which it prunes (a module-scoped
    folder, as hypothesis runs many examples per test call)."""
    return tmp_path_factory.mktemp("fuzz")


@st.composite
def mutated(draw, seeds: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    for op, pos, byte in draw(st.lists(st.tuples(st.sampled_from(["cut", "flip", "delete", "insert", "dup"]),
                                                 st.integers(0, max(len(data), 1)), st.integers(0, 255)),
                                       min_size=1, max_size=5)):
        pos = min(pos, len(data))
        if op == "cut":
            del data[pos:]
        elif op == "flip" and pos < len(data):
            data[pos] = byte
        elif op == "delete":
            del data[pos:pos + byte % 16]
        elif op == "insert":
            data[pos:pos] = bytes([byte]) * (1 + byte % 8)
        elif op == "dup":
            data[pos:pos] = data[max(0, pos - 64):pos]
    return bytes(data)


@pytest.mark.slow
@SETTINGS
@given(mutated(YAML_SEEDS))
def test_mutated_pass_files_give_spec_errors_only(fuzz_dir: Path, data: bytes) -> None:
    from airctl.errors import SpecError
    from airctl.passes.spec import load

    path = fuzz_dir / "p.yaml"
    path.write_bytes(data)
    try:
        load(path)
    except SpecError as e:
        assert e.file == str(path) and (e.line is None or e.line >= 1)


@pytest.mark.slow
@SETTINGS
@given(st.sampled_from(range(len(PROFILE_FILES))), st.data())
def test_mutated_profiler_folders_give_clean_errors_or_warnings(fuzz_dir: Path, which: int,
                                                                 data: st.DataObject) -> None:
    from airctl.profile.analyze import analyze

    folder = fuzz_dir / "prof"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(PROFILE, folder)
    target = folder / PROFILE_FILES[which].relative_to(PROFILE)
    target.write_bytes(data.draw(mutated([target.read_bytes()])))
    try:
        result = analyze(folder)
    except AirctlError as e:
        assert e.file is not None and str(folder) in e.file, e
        return
    for rank in result.ranks:  # whatever was read is well formed: no negative or non-finite times
        for ev in rank.timeline.events:
            assert math.isfinite(ev.start_s) and math.isfinite(ev.end_s) and ev.end_s >= ev.start_s, ev
