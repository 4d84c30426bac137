"""Eager check: does a pass keep the graph's results? Run the FX graph eagerly before and after it.

TorchAir requires custom passes to preserve results, but a compile only shows that the final
outputs differ from eager PyTorch — not which pass broke them. :class:`EagerCheck` is the
instrument: for every pass run with ``check_results`` (YAML passes, unless the file says
``check_results: false``) it leaves ``run.eager_check`` =
``{"matches": bool|None, "max_abs_error", "mismatches", "skipped"}``; the YAML composer fails a
pass whose check says ``matches: False``. Inside TorchAir's hooks the
example inputs are FakeTensors, so this check makes real inputs from their metadata (seeded
``randn`` for floating dtypes, zeros for integer and bool ones, so index tensors stay in range),
then runs the graph with :class:`torch.fx.Interpreter` (no recompile needed, fake mode switched
off, ``torch.manual_seed(0)`` before each run so random ops repeat) before the first pass and after
each pass. A pass whose outputs differ from those of the graph it received is the one that
changed results. The air ops are no-ops eagerly (scope_enter/exit without ``need_execute``,
``record`` an empty token, ``wait`` nothing), so stream passes compare equal, as they must.

This is differential testing on one synthetic input, not a proof: it catches a pass that replaces
``add`` by ``sub``, not one that only differs on inputs it never sees. Stream races are a run-time
matter and are checked by the executor and the final eager comparison. Graphs with symbolic
shapes, or ops with no CPU kernel, are reported as ``skipped`` and never fail the compile. So are
graphs with collectives (``all_reduce``, …): run during one rank's compile they would pair with
whatever the other ranks issue at that moment, or wait for ranks that compile later (the
compiled graph's results are still compared with eager after the run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from airctl.execute.compare import DEFAULT_ATOL, flatten
from airctl.execute.compare import compare as compare_outputs
from airctl.graph.roles import collective_kind
from airctl.instrument import Instrument, PassRun
from airctl.io.fx_reader import target_name


@dataclass
class Outcome:
    outputs: list[Any] | None  # flattened tensors, None when skipped
    skipped: str | None = None


def real_inputs(example_inputs: Any) -> list[Any] | None:
    """Real tensors shaped like ``example_inputs`` (None if a shape is symbolic)."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        return _real_inputs(example_inputs)


def _real_inputs(example_inputs: Any) -> list[Any] | None:
    import torch

    generator = torch.Generator().manual_seed(1234)
    out: list[Any] = []
    for value in example_inputs:
        if isinstance(value, torch.Tensor):
            shape = list(value.shape)
            if not all(isinstance(d, int) for d in shape):
                return None
            dtype = value.dtype
            if dtype.is_floating_point or dtype.is_complex:
                t = torch.randn(shape, generator=generator, dtype=torch.float32).to(dtype)
            else:
                t = torch.zeros(shape, dtype=dtype)
            if list(value.stride()) != list(t.stride()) and all(isinstance(s, int) for s in value.stride()):
                try:
                    t = torch.empty_strided(shape, list(value.stride()), dtype=dtype).copy_(t)
                except RuntimeError:
                    pass
            out.append(t)
        elif isinstance(value, (int, float, bool)) or value is None:
            out.append(value)
        else:
            return None
    return out


def run_graph(gm: Any, inputs: list[Any] | None) -> Outcome:
    """Run ``gm``'s graph eagerly on copies of ``inputs``."""
    if inputs is None:
        return Outcome(None, "symbolic or non-tensor inputs")
    collective = next((n for n in gm.graph.nodes if n.op == "call_function"
                       and collective_kind(target_name(n.target)) is not None), None)
    if collective is not None:
        return Outcome(None, f"the graph issues collectives ({collective.name}: {target_name(collective.target)}): "
                             "not run during the compile, where the other ranks would not take part")
    import torch
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily(), torch.no_grad():
        args = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        torch.manual_seed(0)
        try:
            result = torch.fx.Interpreter(gm, garbage_collect_values=True).run(*args)
        except Exception as e:  # noqa: BLE001 - a check that cannot run must not break the compile
            return Outcome(None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200])
        return Outcome([t.detach().clone() if isinstance(t, torch.Tensor) else t for _, t in flatten(result)])


def run_key(gm: Any, fingerprint: str, example_inputs: Any) -> str | None:
    """What :func:`run_graph`'s outcome for ``gm`` depends on: the graph (its runner fingerprint),
    the example inputs' shapes, strides and dtypes (the real inputs are made from them), the bytes of
    its constant tensors, torch's intra-op threads (a reduction's order); None where a part cannot be
    told (an input or a constant that is not a plain CPU tensor or number)."""
    import hashlib

    import torch

    digest = hashlib.sha256(f"{fingerprint}|threads={torch.get_num_threads()}".encode())
    for value in example_inputs if isinstance(example_inputs, (list, tuple)) else [example_inputs]:
        if isinstance(value, torch.Tensor):
            if not all(isinstance(d, int) for d in (*value.shape, *value.stride())):
                return None
            digest.update(f"|T{value.dtype}{tuple(value.shape)}{value.stride()}".encode())
        elif value is None or isinstance(value, (int, float, bool)):
            digest.update(f"|{value!r}".encode())
        else:
            return None
    from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily

    for node in gm.graph.nodes if hasattr(gm, "graph") else []:
        if node.op != "get_attr":
            continue
        value: Any = gm
        for part in str(node.target).split("."):
            value = getattr(value, part, None)
        if not isinstance(value, torch.Tensor) or isinstance(value, FakeTensor) or value.device.type != "cpu":
            return None
        with unset_fake_temporarily():
            t = value.detach().contiguous()
            digest.update(f"|{node.target}:{t.dtype}{tuple(t.shape)}".encode())
            digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()


def compare(before: Outcome, after: Outcome, atol: float = DEFAULT_ATOL) -> dict[str, Any]:
    """``{"matches": bool|None, "max_abs_error", "mismatches", "skipped"}`` (None: could not tell).

    The outputs are compared by :func:`airctl.execute.compare.compare` with ``rtol = atol``."""
    if before.outputs is None or after.outputs is None:
        return {"matches": None, "skipped": before.skipped or after.skipped}
    if after is before:  # an unchanged graph: the same run's outputs (thousands of such passes in a file)
        return {"matches": True, "max_abs_error": 0.0, "mismatches": [], "skipped": None}
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        result = compare_outputs(before.outputs, after.outputs, atol=atol, rtol=atol, labels=("before", "after"))
    return {"matches": result.matches, "max_abs_error": result.max_abs_error, "mismatches": result.mismatches,
            "skipped": None}


class EagerCheck(Instrument):
    """Runs the graph eagerly before the first checked pass and after every checked pass that changed it.

    Outcomes are remembered by graph fingerprint (the runner's, :func:`airctl.instrument.detect_change`),
    so the graph a pass receives is run once, however many passes check it,
    and a graph TorchAir's own passes changed in between is run afresh. A run before a pass may be
    ``given`` instead, by :func:`run_key` (an incremental compile's, from the run it starts from).
    """

    def __init__(self, atol: float = DEFAULT_ATOL) -> None:
        self.atol = atol
        self._outcomes: dict[str, Outcome] = {}  # fingerprint -> outcome (the latest graph only)
        self._inputs: dict[int, list[Any] | None] = {}  # id(example_inputs) -> real inputs
        # outcomes an earlier run of the same graph gave, by :func:`run_key` (an incremental compile's:
        # pipeline/incremental/reuse.py); ``on_given(key)`` is told when one is used instead of a run
        self.given: dict[str, Outcome] = {}
        self.on_given: Any = None
        self.keep_first = False  # hold the first graph run and its key (a full compile that keeps its graph)
        self.first: tuple[str | None, Outcome] | None = None

    def _wants(self, run: PassRun) -> bool:
        return bool(run.info.get("check_results")) and run.kind == "yaml"

    def _real_inputs(self, run: PassRun) -> list[Any] | None:
        example = run.info.get("example_inputs")
        key = id(example)
        if key not in self._inputs:
            self._inputs = {key: real_inputs(example) if example is not None else None}
        return self._inputs[key]

    def before_pass(self, run: PassRun) -> None:
        if not self._wants(run):
            return
        fp = run.fingerprint_before
        assert fp is not None
        if fp not in self._outcomes:
            self._outcomes = {fp: self._outcome(run, fp)}

    def _outcome(self, run: PassRun, fp: str) -> Outcome:
        """The graph run before a pass: given by an earlier run of the same graph, else run now."""
        wanted = self.given or (self.keep_first and self.first is None)
        key = run_key(run.obj, fp, run.info.get("example_inputs")) if wanted else None
        if key is not None and key in self.given:
            outcome = self.given.pop(key)
            if self.on_given is not None:
                self.on_given(key)
        else:
            outcome = run_graph(run.obj, self._real_inputs(run))
        if self.keep_first and self.first is None:
            self.first = (key, outcome)
        return outcome

    def after_pass(self, run: PassRun) -> None:
        if not self._wants(run):
            return
        before = self._outcomes.get(run.fingerprint_before or "")
        if before is None:
            return
        after = run_graph(run.obj, self._real_inputs(run)) if run.changed else before
        self._outcomes = {run.fingerprint or "": after}
        run.eager_check = compare(before, after, self.atol)
