"""Mode behaviours under ``airctl run``, as TorchAir has them on an NPU (a process per script, forked from
the warm_process: tests/run/helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ledger_text
from tests.run.helpers import SCRIPTS, airctl_run
from tests.warm_process import WarmProcess

pytestmark = pytest.mark.slow


def test_reduce_overhead_leaves_py_dumps_and_generated_code(tmp_path: Path, warm_process: WarmProcess) -> None:
    r = airctl_run(tmp_path, SCRIPTS / "custom_pass.py", "--mode", "reduce-overhead", "--dump-type", "py",
                   warm=warm_process)
    assert r.returncode == 0, r.stderr[-3000:]
    index = r.index
    assert index["mode"] == "reduce-overhead"
    assert index["compilers"][0]["run_eagerly_set_by_airctl"] is True
    assert "set debug.run_eagerly=True" in r.stderr
    by_stage = {d["stage"]: d for d in index["dumps"]}
    assert {"aclgraph-original", "aclgraph-optimized", "generated-code"} <= set(by_stage)
    code = ledger_text(r.ledger / by_stage["generated-code"]["file"])
    # TorchAir's aclgraph codegen: the scope becomes a real stream, record/wait real events
    assert "with torch.npu.stream(_GLOBAL_USER_TAG_TO_STREAM['stream_1']):" in code
    assert "torch.npu.Event()" in code and ".wait(torch.npu.current_stream())" in code
    assert by_stage["aclgraph-original"]["file"].endswith(".py.gz")
    stages = [s["name"] for s in index["graphs"][0]["stages"]]
    assert "after:post_grad_custom_pre_pass" in stages and "fx-final" in stages
    assert index["graphs"][0]["execution"]["matches_eager"] is True


def test_reduce_overhead_rejects_pbtxt_dumps_with_torchairs_message(tmp_path: Path, warm_process: WarmProcess) -> None:
    r = airctl_run(tmp_path, SCRIPTS / "custom_pass.py", "--mode", "reduce-overhead", "--dump-type", "pbtxt",
                   warm=warm_process)
    assert r.returncode == 1
    assert "Graph dump for aclGraph only support 'py' type, but got: pbtxt" in r.stderr
    assert r.index["status"] == "failed"


@pytest.mark.parametrize("mode", ["max-autotune", "reduce-overhead"])
def test_record_wait_runs_in_both_modes(tmp_path: Path, mode: str, warm_process: WarmProcess) -> None:
    r = airctl_run(tmp_path, SCRIPTS / "record_wait.py", mode, warm=warm_process)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.index["execution"]["matches_eager"] is True


def test_fail_on_race_makes_a_racy_script_exit_1(tmp_path: Path, warm_process: WarmProcess) -> None:
    """record_wait.py without its wait: in reduce-overhead, add and sub read stream 1's values unordered."""
    script = tmp_path / "racy.py"
    script.write_text((SCRIPTS / "record_wait.py").read_text().replace("        torchair.ops.wait([record])\n", ""))
    (tmp_path / "run").mkdir()
    r = airctl_run(tmp_path / "run", "--fail-on", "race", script, "reduce-overhead", warm=warm_process)
    assert r.returncode == 1, r.stderr[-3000:]
    assert "--fail-on race: add (racy.py:19) on the default stream reads abs_1 (racy.py:17)" in r.stderr
    assert r.index["status"] == "ok" and len(r.index["execution"]["races"]) == 2


def test_npu_wait_tensor_runs_in_max_autotune(tmp_path: Path, warm_process: WarmProcess) -> None:
    r = airctl_run(tmp_path, SCRIPTS / "stream_switch_wait_tensor.py", "max-autotune", warm=warm_process)
    assert r.returncode == 0, r.stderr[-3000:]
    (graph,) = r.index["graphs"]
    ge = next(s for s in graph["stages"] if s["name"] == "ge-original")
    text = ledger_text(r.ledger / ge["text"])
    assert "Identity" in text  # GE's form of npu_wait_tensor: Identity + control edge
    assert graph["execution"]["matches_eager"] is True


def test_native_streams_are_reported_as_dropped_under_sim(tmp_path: Path, warm_process: WarmProcess) -> None:
    r = airctl_run(tmp_path, SCRIPTS / "native_streams.py", "reduce-overhead", warm=warm_process)
    assert r.returncode == 0, r.stderr[-3000:]
    (warning,) = r.index["warnings"]
    assert "traced away by Dynamo" in warning and "record" in warning
    assert "traced away by Dynamo" in r.stderr


def test_torch_compile_debug_tree_is_recorded_without_repeating_stages(tmp_path: Path,
                                                                       warm_process: WarmProcess) -> None:
    """TORCH_COMPILE_DEBUG is read when torch is imported: that run is a fresh interpreter (tests/warm_process.py),
    one for both modes (``record_wait.py both`` compiles the model in each mode in turn)."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "debug").mkdir()
    plain = airctl_run(tmp_path / "plain", SCRIPTS / "record_wait.py", "both", warm=warm_process)
    debug = airctl_run(tmp_path / "debug", SCRIPTS / "record_wait.py", "both", env_extra={"TORCH_COMPILE_DEBUG": "1"},
                       warm=warm_process)
    assert plain.returncode == 0 and debug.returncode == 0, debug.stderr[-3000:]

    def names(run) -> list[list[str]]:  # noqa: ANN001
        return [[s["name"] for s in graph["stages"]] for graph in run.index["graphs"]]

    assert [c["mode"] for c in debug.index["compilers"]] == ["max-autotune", "reduce-overhead"]
    assert len(names(debug)) == 2 and names(debug) == names(plain)
    assert any(name.startswith("ge-") for name in names(debug)[0])  # max-autotune's GE graphs
    assert "generated-code" in {d["stage"] for d in debug.index["dumps"]}  # reduce-overhead's aclgraph code
    (tree,) = debug.index["torch_compile_debug"]
    assert Path(tree).parent == tmp_path / "debug" / "torch_compile_debug" and (Path(tree) / "torchair").is_dir()
