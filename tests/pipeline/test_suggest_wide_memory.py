"""``passes suggest`` on the wide model stays within the project's 500 MB, the whole command in a fresh process.

fixtures/models/wide.py with ``AIRCTL_WIDE_FORM=plain`` (N bare ``Linear`` branches, one region each)
at N = 200: the command imports torch and TorchAir, compiles the model up to the passes and searches
(docs/reliability.md has the figures; bench/bench_suggest_wide.py measures N = 50, 100, 200). The
peak is the command's own (``tests/faults/bounded.py`` forks it from a small interpreter and reads
``wait4``'s accounting of that one child). The fast lane keeps the search's own bound
(tests/predict/test_suggest_bounds.py).

The check of a written plan (a full ``passes apply`` of it, then ``profile --times --compare``'s
numbers) predicts without filing a profile into the scratch run: filing one also rebuilt that run's
report.html, the largest part of the check's memory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from tests.conftest import MODELS
from tests.faults.bounded import RSS_LIMIT_MB, airctl_capped

pytestmark = pytest.mark.slow


def test_the_wide_model_at_200_branches_is_suggested_within_500_mb(tmp_path: Path) -> None:
    ended = airctl_capped("passes", "suggest", MODELS / "wide.py", "--out", tmp_path / "runs", "-o",
                          tmp_path / "wide.yaml", "--json", cwd=tmp_path, timeout=400.0,
                          env={"AIRCTL_WIDE_FORM": "plain", "AIRCTL_WIDE_N": "200", "AIRCTL_WARM": "0"})
    assert ended.returncode == 0, ended.text[-2000:]
    data = json.loads(ended.stdout)
    assert len(data["regions"]) > 64  # the wide graph reached the search, not a smaller one
    # what the command allocated; its peak RSS also counts torch's resident library pages, which
    # depend on the page cache (464 MB in one install, 512-532 MB in a fresh one of the same files)
    assert ended.own_mb is not None and ended.own_mb <= RSS_LIMIT_MB, \
        f"peak {ended.own_mb} MB allocated ({ended.rss_mb:.0f} MB RSS)"


def test_the_check_of_a_written_plan_files_nothing_into_the_scratch_run(tmp_path: Path) -> None:
    out = tmp_path / "plan.yaml"
    r = CliRunner().invoke(build_app(), ["passes", "suggest", str(MODELS / "two_chains.py"), "--mode",
                                         "reduce-overhead", "-o", str(out), "--out", str(tmp_path / "runs"),
                                         "--backend", "sim", "--json"])
    assert r.exit_code == 0, r.output
    checked = Path(json.loads(r.stdout)["checked"]["ledger"])
    assert out.is_file() and checked.is_dir()
    assert not (checked / "profile").exists()  # no predicted profile, so no report rebuilt around one
