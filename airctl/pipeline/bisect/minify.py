"""The graph form of a reproducer, and ``--minify``: the fewest nodes that still fail.

The model's Dynamo graph is written as a script (:mod:`airctl.io.fx_script`) whose inputs are the
graph's inputs, with their values from the run. For a part of the graph — a set of kept nodes —
every value a kept node reads from a node left out becomes one more input, its value taken from
running the whole graph once on the run's inputs (:func:`airctl.execute.divergence.run_nodes`);
the kept nodes nothing kept reads are the outputs (so none is dead code). ``--minify`` runs
delta debugging (:func:`airctl.pipeline.bisect.search.ddmin`) over the graph's nodes: each candidate is
written into the folder and compiled as ``run.sh`` would; the smallest that still fails stays.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from airctl.io.fx_script import ScriptSpec, render, script_node
from airctl.pipeline.bisect.repro_files import ReproError, save_tensors
from airctl.pipeline.bisect.search import ddmin

COMPUTE = ("call_function", "call_method")


def part(gm: Any, keep: set[str], values: dict[str, Any], origin: str) -> tuple[ScriptSpec, dict[str, Any]]:
    """The script of the nodes in ``keep`` (all compute nodes: the whole graph) and its input values."""
    import torch

    nodes = list(gm.graph.nodes)
    kept = [n for n in nodes if n.op in COMPUTE and n.name in keep]
    kept_set = set(kept)
    whole = len(kept) == sum(1 for n in nodes if n.op in COMPUTE)
    inputs: list[Any] = []
    for n in kept:
        for src in n.all_input_nodes:
            if src not in kept_set and src not in inputs:
                inputs.append(src)
    if whole:  # the graph's own outputs
        outputs = next(n for n in nodes if n.op == "output").all_input_nodes
    else:  # the kept nodes no kept node reads (nothing is dead code)
        outputs = [n for n in kept if not any(u in kept_set for u in n.users)]
    placeholders = [n for n in nodes if n.op == "placeholder"]
    inputs.sort(key=lambda n: (0, placeholders.index(n)) if n in placeholders else (1, nodes.index(n)))
    names = {n: n.name for n in nodes}
    tensors = {}
    for n in inputs:
        if not isinstance(values.get(n.name), torch.Tensor):
            raise ReproError(f"input {n.name} of this part is a {type(values.get(n.name)).__name__}, not a tensor")
        tensors[n.name] = values[n.name]
    spec = ScriptSpec([n.name for n in inputs], [script_node(n, names) for n in kept], [n.name for n in outputs],
                      title=f"{'The' if whole else 'Part of the'} graph of {origin}, as a model script.",
                      origin=origin, cut=not whole)
    return spec, tensors


def write_graph_form(kept: dict[str, Any], script: Path, folder: Path, *, minify: bool,
                     still_bad: Callable[[], bool], say: Callable[[str], None]) -> dict[str, Any] | None:
    """Write model.py + inputs.safetensors from the Dynamo graph; with ``minify``, the smallest failing part."""
    from airctl.execute.divergence import run_nodes

    graphs = kept["dynamo"]
    if len(graphs) != 1:
        raise ReproError(f"the model compiled into {len(graphs)} Dynamo graphs: the graph form holds exactly one",
                         hint="remove the graph break (TORCH_LOGS=graph_breaks), or let the script travel as it is "
                              "(no --graph/--minify)")
    gm, inputs = graphs[0]
    values = run_nodes(gm, inputs).values
    names = [n.name for n in gm.graph.nodes if n.op in COMPUTE]
    origin = script.name

    def write(keep: list[str]) -> None:
        spec, tensors = part(gm, set(keep), values, origin)
        (folder / "model.py").write_text(render(spec), encoding="utf-8")
        save_tensors(tensors, folder / "inputs.safetensors")

    write(names)
    if not minify:
        return None
    seen: dict[tuple[str, ...], bool] = {}

    def bad(keep: list[str]) -> bool:
        key = tuple(keep)
        if key not in seen:
            try:
                write(keep)
                seen[key] = still_bad()
            except ReproError:
                seen[key] = False
            word = "still fails" if seen[key] else "does not fail"
            say(f"minify: {len(keep)} of {len(names)} nodes ({', '.join(keep)}): {word}")
        return seen[key]

    if not bad(names):
        raise ReproError("the graph form of the model does not fail the way the run did, so it cannot be minified",
                         hint="the failure may need what the graph form loses (source-line selectors, the script's "
                              "own code); run without --minify")
    smallest = ddmin(names, bad)
    write(smallest)
    return {"nodes_before": len(names), "nodes_after": len(smallest), "kept": smallest, "compiles": len(seen)}
