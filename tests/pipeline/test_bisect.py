"""``airctl bisect`` end to end (issue #16): each level names what it should, within its compile budget.

The fixtures break fixtures/models/blocks.py on purpose (their first comments say how): the
second of three YAML passes races (reduce-overhead) or turns add into sub. Each bisect compiles
the model a handful of times (about a second each once TorchAir is loaded), so these are slow.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from tests.conftest import REPO

MODELS = REPO / "fixtures" / "models"
PASSES = REPO / "fixtures" / "passes"
pytestmark = pytest.mark.slow


def bisect_json(tmp_path: Path, *args: object) -> dict:
    r = CliRunner().invoke(build_app(), ["bisect", *map(str, args), "--out", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _levels(data: dict, level: str) -> list[dict]:
    return [s for s in data["steps"] if s["level"] == level]


def test_race_names_the_second_pass_and_the_placement_on_blocks_0(tmp_path: Path) -> None:
    data = bisect_json(tmp_path, MODELS / "blocks.py", "--passes", PASSES / "bisect_race.yaml",
                       "--mode", "reduce-overhead", "--bad", "race")
    culprit = data["culprit"]
    assert (culprit["pass"], culprit["kind"]) == ("blocks-on-stream1", "yaml")
    assert [p["unit"] for p in culprit["placements"]] == ["mm..relu (blocks.0)"]
    assert culprit["nodes"] == ["mm", "relu"]
    assert "+scope_enter" in culprit["diff"] and "['stream_1']" in culprit["diff"]
    assert culprit["declared_at"].endswith("bisect_race.yaml:14")
    # O(log n) per level: 3 YAML passes -> the empty prefix plus ceil(log2 3) prefixes
    assert len(_levels(data, "yaml")) <= 1 + math.ceil(math.log2(3))
    assert len(_levels(data, "torchair")) == 1  # all switchable TorchAir passes off: still racy
    assert len(_levels(data, "placements")) <= 2 * math.ceil(math.log2(2)) + 1
    yaml_steps = {s["step"]: s for s in data["steps"]}
    assert [yaml_steps[n]["bad"] for n in data["decisions"][0]["steps"]] == [False, False, True, True]
    # every step kept its ledger, which says what the step changed
    for step in data["steps"]:
        index = json.loads((Path(step["ledger"]) / "index.json").read_text())
        assert index["bisect"]["step"] == step["step"] and index["command"] == "bisect"
    assert json.loads((Path(data["folder"]) / "bisect.json").read_text())["culprit"]["pass"] == "blocks-on-stream1"
    # --bad check on the same ledgers: the verifier sees the race statically in the culprit's run, not without passes
    assert _judge("check", culprit["ledger"]).bad and not _judge("check", data["steps"][1]["ledger"]).bad


def test_a_later_pass_fixing_an_earlier_race_bisects_the_race_that_remains(tmp_path: Path) -> None:
    """Issue 32, acceptance 2: the third pass adds the wait the first lacked; the head's race remains."""
    r = CliRunner().invoke(build_app(), ["bisect", str(MODELS / "blocks.py"), "--passes",
                                         str(PASSES / "bisect_remaining_race.yaml"), "--mode", "reduce-overhead",
                                         "--bad", "race", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    text = r.stdout
    # the report starts with the whole file's problem, then the culprit, each why labelled with its run
    assert text.index("problem (step 1, the whole pass file): mm_2") < text.index("culprit: head-on-stream2")
    assert "why (step " in text and "`head-on-stream2` once more" in text
    why = text.split("why (step ", 1)[1].splitlines()[0]
    assert "mm_2" in why and "'stream_2'" in why and "reads add" in why
    assert str(REPO) not in text.split("culprit:", 1)[0]  # shareable paths
    (folder,) = tmp_path.glob("bisect-*")
    data = json.loads((folder / "bisect.json").read_text())
    assert data["culprit"]["pass"] == "head-on-stream2"
    assert data["problem"]["problems"][0]["key"][:2] == ["mm_2", "add"]
    first = next(s for s in data["steps"] if s["yaml_passes"] == ["blocks0-on-stream1"])
    assert not first["bad"] and "not with the starting run's problem" in first["why"]  # its race is fixed later
    # step lines on stderr are never cut mid-word
    assert "reduce-overhead adds no synchronisation for cross-stream data edges))" in r.stderr


def _judge(kind: str, ledger: str):  # noqa: ANN202
    from types import SimpleNamespace

    from airctl.ledger.reader import Ledger
    from airctl.pipeline.bisect.conditions import Condition

    return Condition.make(kind).judge(SimpleNamespace(index=Ledger.open(ledger).index, ledger_dir=Path(ledger)))


def test_wrong_numbers_name_the_pass_and_the_first_diverging_node_with_its_line(tmp_path: Path) -> None:
    data = bisect_json(tmp_path, MODELS / "blocks.py", "--passes", PASSES / "bisect_numbers.yaml")
    culprit = data["culprit"]
    assert (culprit["pass"], culprit["kind"]) == ("add-becomes-sub", "yaml")
    assert [p["unit"] for p in culprit["placements"]] == ["add: aten.add.Tensor -> aten.sub.Tensor"]
    divergence = culprit["divergence"]
    assert divergence["node"] == "add"
    assert (divergence["op_before"], divergence["op"]) == ("aten.add.Tensor", "aten.sub.Tensor")
    assert divergence["source"].endswith("fixtures/models/blocks.py:38")  # out = self.head(h + x)
    assert data["bad"].startswith("outputs differ from eager")


def test_a_torchair_pass_is_named_when_the_failure_needs_it(tmp_path: Path) -> None:
    model = tmp_path / "viewer.py"
    model.write_text("import torch\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                     "        return torch.relu(x.view(4, 2)) + 1\n\n"
                     "def get_model():\n    return M()\n\ndef get_inputs():\n    return (torch.ones(8),)\n")
    # bad = the final FX graph has no view left (grep finds a reshape): only TorchAir's view_to_reshape makes one
    dump = f"{sys.executable} -m airctl dump {{ledger}} --stage fx-final --type fx"  # the ledger's layout may change
    data = bisect_json(tmp_path, model, "--bad-cmd", f"! {dump} | grep -q aten.reshape")
    culprit = data["culprit"]
    assert (culprit["pass"], culprit["kind"]) == ("view_to_reshape", "torchair-fx")
    assert culprit["nodes"] == ["view"]  # the node whose op the pass changed
    switchable = 11  # max-autotune: 5 FX passes and 6 GE passes can be switched off
    assert len(_levels(data, "torchair")) <= 1 + math.ceil(math.log2(switchable)) + 1
    assert data["decisions"][0]["text"].startswith("TorchAir pass `view_to_reshape` (torchair-fx) is needed")


def test_a_run_that_is_not_bad_is_refused_with_its_ledger(tmp_path: Path) -> None:
    r = CliRunner().invoke(build_app(), ["bisect", str(MODELS / "seed.py"), "--out", str(tmp_path), "--bad", "race"])
    assert r.exit_code == 2, r.output
    assert "the starting run is not bad: no stream race" in r.output and "hint:" in r.output
