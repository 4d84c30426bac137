"""The layer contract in pyproject.toml, checked as import-linter checks it: kept by the code as it is,
and broken by one import that points from a feature to a feature beside it or above it (the kind of
back-arrow the contract could not see while every feature shared one layer)."""

from __future__ import annotations

import grimp
import pytest
from importlinter.contracts.layers import LayersContract

from tests.conftest import REPO

tomllib = pytest.importorskip("tomllib")  # Python 3.11's; import-linter reads the same table on 3.10


@pytest.fixture(scope="module")
def layers() -> LayersContract:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    options = next(c for c in config["contracts"] if c["type"] == "layers")
    return LayersContract(name=options["name"], session_options={"root_packages": ["airctl"]},
                          contract_options={k: v for k, v in options.items() if k not in ("name", "type")})


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("airctl", cache_dir=None)


def _broken_by(layers: LayersContract, graph: grimp.ImportGraph, importer: str, imported: str) -> list[str]:
    had = graph.direct_import_exists(importer=importer, imported=imported)
    graph.add_import(importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}")
    try:
        check = layers.check(graph, verbose=False)
    finally:
        if not had:
            graph.remove_import(importer=importer, imported=imported)
    return [f"{d['importer']} -> {d['imported']}" for d in check.metadata["invalid_dependencies"]]


def test_the_code_keeps_the_contract(layers: LayersContract, graph: grimp.ImportGraph) -> None:
    check = layers.check(graph, verbose=False)
    assert check.kept, check.metadata


@pytest.mark.parametrize(("importer", "imported"), [
    ("airctl.verify.happens_before", "airctl.execute.timeline"),   # up: verify sits below execute
    ("airctl.passes.spec", "airctl.verify.findings"),             # up: the pass language is the lowest feature
    ("airctl.execute.timeline", "airctl.diff.match"),              # sideways: siblings are independent
    ("airctl.profile.write", "airctl.report.page"),                # up: report reads profiles, not the reverse
])
def test_a_feature_to_feature_back_arrow_breaks_it(layers: LayersContract, graph: grimp.ImportGraph,
                                                   importer: str, imported: str) -> None:
    assert _broken_by(layers, graph, importer, imported), f"{importer} -> {imported} was allowed"


def test_a_downward_import_between_features_keeps_it(layers: LayersContract, graph: grimp.ImportGraph) -> None:
    assert _broken_by(layers, graph, "airctl.report.page", "airctl.profile.write") == []
