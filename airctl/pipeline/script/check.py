"""Execution check for ``airctl run``: each compiled graph against its own Dynamo graph, run eagerly.

``airctl compile`` owns the model and its inputs, so it runs the whole model eagerly for
reference. ``airctl run`` does not: the script calls the compiled model however it likes. What
airctl does own is every Dynamo graph TorchAir compiles, so the reference is per graph:

1. when TorchAir's backend receives a Dynamo graph, a copy of that graph is kept (same
   parameters, its own ``fx.Graph`` — TorchAir's reduce-overhead passes rewrite the original);
2. on the first call of the compiled graph, the copy runs eagerly on clones of the call's
   arguments (RNG state saved and restored, so the compiled call draws the same numbers);
3. the compiled graph runs on the real arguments — GE (max-autotune: under sim, the FX graph
   TorchAir converted) or TorchAir's aclgraph forward (reduce-overhead: under sim, its final FX
   graph), both on the multi-stream executor (:mod:`airctl.execute`);
4. the outputs are compared (:func:`airctl.execute.compare.compare`) and the result goes into
   that graph's ``execution`` entry in ``index.json``, with the stream races the multi-stream
   executor saw in that call (``races``; also gathered in the run-level ``execution.races``).

The eager reference gives the ``air`` ops their eager meaning (TorchAir registers it: scopes,
record and wait do nothing) except ``air.wait_tensor``, whose eager kernel raises by design
(reference/torchair.md §1.1): the reference treats it as the identity GE converts it to. Only
the forward of a training graph is checked; the backward runs inside autograd where airctl
does not see its outputs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from airctl.execute.compare import DEFAULT_ATOL, compare
from airctl.ledger.collectives import EAGER_REFERENCE, CollectiveLog, call_details

Record = Callable[[int, dict[str, Any]], None]


def is_wait_tensor(target: Any) -> bool:
    return str(target).split(".")[:2] == ["air", "wait_tensor"]


def run_graph_eagerly(gm: Any, args: Sequence[Any], collectives: CollectiveLog | None = None,
                      graph: str = "graph") -> Any:
    """Run an FX GraphModule node by node, with ``air.wait_tensor`` as the identity (GE's Identity).
    With a collective log (multi-rank runs) its collectives are logged as ``eager reference``."""
    import torch

    from airctl.graph.roles import collective_kind, is_collective_wait
    from airctl.io.fx_reader import target_name

    seqs: dict[str, int] = {}

    class GeSemantics(torch.fx.Interpreter):
        def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
            if is_wait_tensor(target):
                return args[0]
            return super().call_function(target, args, kwargs)

        def run_node(self, n: Any) -> Any:
            op = target_name(n.target) if n.op == "call_function" else ""
            kind = collective_kind(op) if collectives is not None and op else None
            if kind is not None:
                args, kwargs = self.fetch_args_kwargs_from_env(n)
                seqs[n.name] = collectives.issue(graph=graph, node=n.name, op=op, kind=kind, stream=None,
                                                 by=EAGER_REFERENCE, **call_details(args, kwargs))
                out = super().run_node(n)
                collectives.done(seqs[n.name])
                return out
            if collectives is not None and op and is_collective_wait(op) and n.all_input_nodes:
                seq = seqs.get(n.all_input_nodes[0].name)
                collectives.wait(seq, n.name, "eager", "start")
                out = super().run_node(n)
                collectives.wait(seq, n.name, "eager", "end")
                return out
            return super().run_node(n)

    return GeSemantics(gm).run(*args)


def detached_clone(value: Any) -> Any:
    """A copy of ``value``'s tensors (in lists, tuples and dicts), detached, each keeping ``requires_grad``."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(detached_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: detached_clone(v) for k, v in value.items()}
    return value


def copy_graph_module(gm: Any) -> Any:
    """A GraphModule sharing ``gm``'s parameters and submodules, with its own copy of the graph."""
    import copy

    import torch

    return torch.fx.GraphModule(gm, copy.deepcopy(gm.graph), class_name=type(gm).__name__)


@dataclass
class GraphCheck:
    """The check of one compiled graph: compares its first ``limit`` calls."""

    number: int  # Dynamo graph number (the ``k`` of graph ids ``k-inference``/``k-forward``)
    reference: Any
    record: Record
    recording: Callable[[Any], Any]  # RunExecution.recording: a context that collects one call's races
    atol: float = DEFAULT_ATOL
    limit: int = 1
    collectives: CollectiveLog | None = None  # multi-rank runs: the reference's collectives are logged too
    calls: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)
    races: list[dict[str, Any]] = field(default_factory=list)  # multi-stream executor (sim)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wrap(self, compiled: Callable[..., Any]) -> Callable[..., Any]:
        def compiled_with_check(*args: Any) -> Any:
            with self._lock:
                self.calls += 1
                check = self.calls <= self.limit
            if not check:
                return compiled(*args)
            return self._checked_call(compiled, args)

        return compiled_with_check

    def _checked_call(self, compiled: Callable[..., Any], args: Sequence[Any]) -> Any:
        import torch

        expected: Any = None
        reason = None
        rng = torch.get_rng_state()
        try:
            with torch.no_grad():
                expected = torch._dynamo.disable(run_graph_eagerly)(self.reference, detached_clone(list(args)),
                                                                    self.collectives, f"dynamo graph {self.number}")
        except Exception as e:  # the check is a debugging aid: never the reason a script fails
            reason = f"the eager reference raised {type(e).__name__}: {e}"
        finally:
            torch.set_rng_state(rng)
        from airctl.execute.recorder import Recorder

        rec = Recorder()
        with self.recording(rec):  # stream races the multi-stream executor (sim) sees in this call
            out = compiled(*args)
        self.races.extend(r for r in rec.race_rows() if r not in self.races)
        if reason is None:
            cmp = compare(expected, out, atol=self.atol, rtol=self.atol)
            result = {"checked": True, "call": self.calls, **cmp.to_json()}
        else:
            result = {"checked": False, "call": self.calls, "reason": reason}
        result["reference"] = "dynamo graph run eagerly"
        self.results.append(result)
        self.record(self.number, self.summary())
        return out

    def summary(self) -> dict[str, Any]:
        checked = [r for r in self.results if r["checked"]]
        summary: dict[str, Any] = {
            "checked": bool(checked),
            "calls_checked": len(checked),
            "reference": "dynamo graph run eagerly",
            "races": list(self.races),
        }
        if checked:
            summary.update(
                matches_eager=all(r["matches_eager"] for r in checked),
                max_abs_error=max(r["max_abs_error"] for r in checked),
                outputs=checked[-1]["outputs"],
                atol=self.atol,
                rtol=self.atol,
                mismatches=[m for r in checked for m in r["mismatches"]][:20],
            )
        else:
            summary["reason"] = self.results[-1]["reason"] if self.results else "never called"
        return summary


def run_summary(checks: Sequence[GraphCheck]) -> dict[str, Any] | None:
    """The run-level ``execution`` entry: all checked graphs together."""
    if not checks:
        return None
    summaries = [c.summary() for c in checks]
    checked = [s for s in summaries if s["checked"]]
    return {
        "matches_eager": all(s["matches_eager"] for s in checked) if checked else None,
        "max_abs_error": max((s["max_abs_error"] for s in checked), default=0.0),
        "graphs": len(checks),
        "graphs_checked": len(checked),
        "mismatches": [f"graph {c.number}: {m}" for c, s in zip(checks, summaries, strict=True)
                       if s["checked"] for m in s["mismatches"]][:20],
        "not_checked": [f"graph {c.number}: {s['reason']}" for c, s in zip(checks, summaries, strict=True)
                        if not s["checked"]],
        "reference": "each Dynamo graph run eagerly on clones of its inputs",
        "races": [{**r, "dynamo_graph": c.number} for c in checks for r in c.races],
    }
