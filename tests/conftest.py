"""Shared fixtures: paths, and compiled ledgers shared across tests (compiling costs seconds)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "fixtures" / "models"
BAD = REPO / "fixtures" / "bad"
SHARED = REPO.parent / "shared"

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# pytest keeps the test modules it rewrites for its assertions (in __pycache__) only where Python may
# write bytecode; where the environment says it may not (PYTHONDONTWRITEBYTECODE=1, as on our
# machines), every run and every worker rewrote all of them again: about 5 s of CPU per worker
sys.dont_write_bytecode = False

# Tests import torch directly; with torch-npu installed and no CANN that needs
# TORCH_DEVICE_BACKEND_AUTOLOAD=0, which airctl sets exactly as it does for itself.
from airctl.torch_env import ensure_torch_importable  # noqa: E402

ensure_torch_importable()

# Every ``airctl`` the suite starts imports this worktree's airctl, and none starts a warm process of
# the user's (docs/warm.md): tests that want one use the session's (tests/warm_process.py) or their own.
os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
os.environ.setdefault("AIRCTL_WARM", "0")


def _signals_as_a_terminal_gives_them() -> None:
    """The suite sends itself SIGINT, SIGTERM and SIGHUP and expects them to land. A shell starts a
    background job (``cmd &``, ``nohup``) with SIGINT/SIGQUIT or SIGHUP ignored, Python keeps an
    ignored SIGINT ignored, and every such test would then wait forever: start from the defaults."""
    import signal

    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is signal.SIG_IGN:
            signal.signal(signum, signal.default_int_handler if name == "SIGINT" else signal.SIG_DFL)


_signals_as_a_terminal_gives_them()


@pytest.fixture(autouse=True)
def _excepthook_restored():
    """``torch.distributed.init_process_group`` wraps ``sys.excepthook`` to prefix every traceback line
    with ``[rankN]:`` and ``destroy_process_group`` leaves the wrapper on; a later test in the same
    worker that reads an in-process run's traceback then found ``[rank0]: [rank0]: ...``. Each test
    starts with the hook the worker began with."""
    hook = sys.excepthook
    yield
    sys.excepthook = hook


def _torchair_patched_first() -> None:
    """TorchAir's and npugraph_ex's compilers each register the same Python kernels once per process
    (``aten.to.other`` for AutogradPrivateUse1, ...); npugraph_ex's copy skips them when TorchAir's are
    there, TorchAir's does not, so a max-autotune compile after an npugraph_ex one fails in one process
    ("Trying to override a python impl"), on an NPU as under sim: a command is one process, and one
    mode. Tests compile in their worker's process in whatever order the files come: each worker is put
    in the order a process that used TorchAir first would be in."""
    registry = sys.modules.get("airctl.sim.registry")
    torchair = registry.REGISTRY.torchair if registry is not None else None
    if torchair is None or torchair._utils.add_npu_patch.has_run:
        return
    import torch
    from torch._C import DispatchKey

    aten = torch.ops.aten
    for op, key in ((aten.to.other, DispatchKey.AutogradPrivateUse1),
                    (aten.type_as.default, DispatchKey.AutogradPrivateUse1),
                    (aten.matmul_backward.default, DispatchKey.CompositeImplicitAutograd)):
        if op.py_kernels.pop(key, None) is not None:  # npugraph_ex's, registered first
            op._dispatch_cache.clear()
    torchair._utils.add_npu_patch({}, torchair.CompilerConfig())


@pytest.fixture(autouse=True)
def _torchair_first():
    _torchair_patched_first()
    yield
    _torchair_patched_first()


@pytest.fixture(autouse=True)
def _no_process_group_left():
    """A model script that starts a process group (``fixtures/models/ddp_overlap.py``), compiled in the
    test's process, leaves it initialized as a user's script does; the process of a real command ends
    with it. A later test in the same worker that starts its own then met "trying to initialize the
    default process group twice", depending on which worker ran which files first. A test ends with
    none it started (a module's own world, started by its fixture before the test, stays)."""

    def started() -> bool:
        dist = sys.modules.get("torch.distributed")
        return dist is not None and dist.is_available() and dist.is_initialized()

    before = started()
    yield
    if not before and started():
        sys.modules["torch.distributed"].destroy_process_group()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many workers ``-n auto`` (pyproject's addopts) starts: the whole suite (no test named, as
    README command 2 runs it, the fast lane included) spreads over up to four of the machine's cores
    by test file; tests named on the command line (the edit-test loop) run in this process, since a
    worker pays collection and TorchAir's import again. ``-n N`` or ``-n 0`` decides otherwise."""
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return 0
    return max(1, min(4, len(os.sched_getaffinity(0))))


# The heaviest test files, heaviest first: seconds of test time in one run of the whole suite (README
# command 2, 2026-12-07, two workers, a host at load average 5; the sweeps left out). pytest-xdist hands
# whole files to the workers in collection order (``--no-loadscope-reorder`` in pyproject's addopts),
# so these start first and the many short files fill in around them; ordered by their count of tests,
# as xdist does by default, tests/run/test_lifecycle.py began late and ran on alone at the end.
HEAVY_FIRST = (
    "tests/cli/test_warm.py",  # 176 s: cold commands beside warm ones, a changed install's new warm process
    "tests/cli/test_verdicts.py",  # 94 s: compiles a transformers model through the loop's commands
    "tests/pipeline/test_transformers_models.py",  # 76 s
    "tests/run/test_lifecycle.py",  # 72 s: signals at every phase of a compile
    "tests/pipeline/test_incremental_ledgers.py",  # 60 s: in-process compiles, full against incremental
    "tests/predict/test_suggest_bounds.py",  # 59 s: the search over a 200-branch model
    "tests/predict/test_suggest.py",  # 41 s
    "tests/cli/test_run_forms.py",  # 39 s
    "tests/pipeline/test_suggest_plans.py",  # 38 s and more: its cases failed early in that run
    "tests/verify/test_capture_agree.py",  # 35 s: R16's model captures 128 batch sizes, twice
    "tests/cli/test_warm_reliability.py",  # 35 s
    "tests/pipeline/test_suggest_wide_memory.py",  # 32 s
    "tests/run/test_multirank.py",  # 32 s
    "tests/pipeline/test_why_runs.py",  # 24 s
    "tests/faults/test_run_folders.py",  # 24 s
    "tests/pipeline/test_npugraph_ex.py",  # 23 s
    "tests/faults/test_rank_ownership.py",  # 22 s
    "tests/faults/test_fault_injection.py",  # 22 s
    "tests/run/test_modes.py",  # 21 s
    "tests/ledger/test_phases.py",  # 20 s
    "tests/pipeline/test_repro.py",  # 20 s
    "tests/cli/test_why.py",  # 19 s
)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What every test process holds once the tests are collected (torch, TorchAir, transformers, the
    test modules) is frozen out of the cyclic collector, and young objects are collected ten times less
    often: a worker's full collections walked that whole heap, about 1 s each, while the tests compile
    models that allocate millions of objects (12 % of a compile-heavy file's time, 2026-11-27). The
    product's warm process and rank forks freeze their heaps the same way (airctl/cli/warm.py)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 10, 10)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--sweeps", action="store_true", default=False,
                     help="run the sweeps too (tests marked `sweep`), which the suite leaves out by default")


def _sweeps_wanted(config: pytest.Config) -> bool:
    """``--sweeps``, or a ``-m`` expression that names the marker (``-m sweep``: the sweeps alone)."""
    return config.getoption("sweeps") or "sweep" in (config.getoption("markexpr") or "")


SWEPT: list[pytest.Item] = []  # the sweeps this process collected and left out (tests/test_suite_order.py)
KEPT: list[pytest.Item] = []  # and the tests it collected beside them, before -k or -m chose among them


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: KEPT is every test collected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The sweeps (marker ``sweep``) left out unless asked for; then the heaviest files first
    (HEAVY_FIRST), every other file after them in its collected order."""
    if not _sweeps_wanted(config):
        SWEPT[:] = [item for item in items if item.get_closest_marker("sweep") is not None]
        KEPT[:] = [item for item in items if item.get_closest_marker("sweep") is None]
        if SWEPT:
            config.hook.pytest_deselected(items=list(SWEPT))
            items[:] = [item for item in items if item.get_closest_marker("sweep") is None]
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def ledger_text(path: Path) -> str:
    """A ledger file's text, inflated when the ledger stores it gzip-compressed (``*.gz``)."""
    from airctl.io.compressed import read_bytes

    return read_bytes(path).decode("utf-8")


def ledger_json(path: Path) -> dict:
    """A ledger JSON file (a stage snapshot, ``*.json.gz``) as a dict."""
    import json

    return json.loads(ledger_text(path))


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("airctl-runs")


_CACHE: dict[tuple[str, str, str | None], object] = {}


def compiled(model: str, mode: str, out: Path, passes: str | None = None):
    """Compile fixtures/models/<model>.py once per session, mode and pass file (a path under the
    repo, e.g. ``passes/stream.yaml``); returns the CompileResult."""
    from airctl.pipeline.compile.compiler import CompileRequest, compile_model

    key = (model, mode, passes)
    if key not in _CACHE:
        _CACHE[key] = compile_model(CompileRequest.of(MODELS / f"{model}.py", mode=mode, out_dir=out, backend="sim",
                                                   passes_file=str(REPO / passes) if passes else None))
    return _CACHE[key]


@pytest.fixture(scope="session")
def compile_fixture(runs_dir: Path):
    return lambda model, mode="max-autotune", passes=None: compiled(model, mode, runs_dir, passes)


@pytest.fixture(scope="session")
def warm_process():
    """airctl's warm process, forking ``python -m airctl`` processes with torch and TorchAir imported
    (tests/warm_process.py); started on first use, one for the whole session (every worker's)."""
    from tests.warm_process import WarmProcess

    return WarmProcess.shared()
