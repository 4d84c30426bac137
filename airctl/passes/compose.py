"""One TorchAir hook per stage, running the YAML passes of that stage with every pass observed.

TorchAir has exactly two public pass hooks (``config.post_grad_custom_pre_pass`` and
``post_grad_custom_post_pass``), each taking one callable. :func:`compose` folds the passes of a
stage into one such callable that, for each pass, in file order:

1. reads the graph it receives (airctl :class:`~airctl.graph.model.Graph`) and calls the active
   capture session's instruments ``before_pass("yaml:<name>", graph)``;
2. runs the pass, timed; a selector that matches nothing skips an ``optional`` pass and fails any
   other; a pass that raises becomes a :class:`~airctl.errors.PassError` naming the pass, the node
   and the user's traceback (stage ``failed:yaml:<name>`` in the ledger, ``after_pass_failed``);
3. reads the graph it left, decides whether it changed (fingerprint), notes inserted and removed
   node names and a returned new graph (TorchAir ignores it: rule R11, a warning);
4. runs the result check (:mod:`airctl.passes.eager_check`) unless ``check_results: false``, and
   fails the pass, by name, when it changed the graph's results;
5. adds the ledger stage ``yaml:<name>`` (snapshot, readable text when changed, ``changed``,
   ``seconds``, ``node_delta``, ``inserted``, ``removed``, ``eager_check``) and calls ``after_pass``.

With no capture session active (the hooks used from a plain TorchAir script) steps 1, 3 and 5
only keep a summary in :attr:`PassHooks.runs`. Errors raised here reach the caller wrapped by
Dynamo (``BackendCompilerFailed``), so they are also kept, unwrapped, in :attr:`PassHooks.errors`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError, PassError
from airctl.instrument.fingerprint import fingerprint
from airctl.io.fx_reader import read_fx
from airctl.passes import eager_check
from airctl.passes.builtin import PassFn, SelectorMissed, build
from airctl.passes.plugin import user_traceback
from airctl.passes.select import near_misses, node_infos, select
from airctl.passes.spec import PassFile, PassSpec, load


@dataclass
class PassHooks:
    """What :func:`build_hooks` returns: the two TorchAir hooks and what they observed."""

    spec: PassFile
    pre_pass: PassFn | None = None
    post_pass: PassFn | None = None
    explain: bool = False
    warnings: list[AirctlError] = field(default_factory=list)
    errors: list[AirctlError] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    explanations: list[dict[str, Any]] = field(default_factory=list)

    def result_changers(self) -> list[str]:
        return [r["pass"] for r in self.runs if (r.get("eager_check") or {}).get("matches") is False]


def build_hooks(path: Path | str, *, explain: bool = False) -> PassHooks:
    """Parse a YAML pass file and build one TorchAir hook per stage (None where a stage has no pass).

    ``explain=True`` never fails on a selector: it records what each selector matched (or its
    closest candidates) in :attr:`PassHooks.explanations` and applies the passes it can.
    Raises :class:`~airctl.errors.SpecError` for an invalid file or a plugin that cannot load.
    """
    spec = load(path)
    base = Path(path).resolve().parent
    hooks = PassHooks(spec, explain=explain, warnings=list(spec.warnings))
    for stage in ("pre", "post"):
        bound = [(p, build(p, base)) for p in spec.stage(stage)]
        if bound:
            setattr(hooks, f"{stage}_pass", compose(stage, bound, hooks))
    return hooks


def _graph_kind(graph_id: str | None) -> str | None:
    return graph_id.split("-", 1)[1] if graph_id and "-" in graph_id else None


def _wrap_failure(spec: PassSpec, fn: PassFn, exc: BaseException) -> PassError:
    if isinstance(exc, PassError):
        return exc
    plugin_file = getattr(fn, "airctl_plugin_file", None)
    text, line = user_traceback(exc, plugin_file)
    what = f"python plugin {spec.fields.get('plugin')}" if spec.kind == "python" else f"kind {spec.kind}"
    if plugin_file and line is not None:
        file, column = plugin_file, None
    else:
        file, line, column = spec.file, spec.line, spec.column
    error = PassError(f"pass `{spec.name}` ({what}) raised {type(exc).__name__}: {exc}\n{text}", file=file, line=line,
                      column=column, hint=f"the pass is declared at {spec.file}:{spec.line}; the graph it received "
                                          f"is in the ledger stage before failed:yaml:{spec.name}")
    return error


def _explain(spec: PassSpec, gm: Any, graph_id: str | None) -> list[dict[str, Any]]:
    infos = node_infos(gm.graph)
    rows = []
    for role, sel in spec.selectors.items():
        found = select(sel, infos)
        row: dict[str, Any] = {"pass": spec.name, "stage": spec.stage, "graph": graph_id, "role": role,
                               "selector": sel.to_json(), "description": sel.describe(),
                               "matches": [i.to_json() for i in found]}
        if not found:
            miss = near_misses(sel, infos)
            row.update(message=miss.message(), field_counts=miss.field_counts, candidates=miss.candidates,
                       optional=spec.optional)
        rows.append(row)
    return rows


def compose(stage: str, bound: list[tuple[PassSpec, PassFn]], hooks: PassHooks) -> PassFn:
    """Fold the passes of one stage into a single TorchAir custom pass."""

    def run_yaml_passes(gm: Any, example_inputs: Any, config: Any) -> None:
        from airctl.pipeline.capture import current_session, fx_text

        session = current_session()
        graph_id = session.current if session is not None else None
        kind = _graph_kind(graph_id)
        inputs: list[Any] | None = None
        baseline: eager_check.Outcome | None = None
        wants_check = not hooks.explain and any(p.check_results for p, _ in bound)
        if wants_check:
            inputs = eager_check.real_inputs(example_inputs)
        for spec, fn in bound:
            if spec.graphs and kind and kind not in spec.graphs:
                continue
            name = f"yaml:{spec.name}"
            before = read_fx(gm, graph_id or "graph")
            before_fp = fingerprint(before)
            if session is not None:
                for inst in session.instruments:
                    inst.before_pass(name, before)
            if hooks.explain:
                hooks.explanations.extend(_explain(spec, gm, graph_id))
            if spec.check_results and wants_check and baseline is None:
                baseline = eager_check.run(gm, inputs)
            skipped: str | None = None
            start = time.perf_counter()
            try:
                result = fn(gm, example_inputs, config)
            except SelectorMissed as e:
                if not (spec.optional or hooks.explain):
                    _failed(session, graph_id, name, gm, e, time.perf_counter() - start, hooks)
                    raise
                result, skipped = None, e.message
            except Exception as e:  # noqa: BLE001 - user passes: report by name, keep the ledger
                error = _wrap_failure(spec, fn, e)
                _failed(session, graph_id, name, gm, error, time.perf_counter() - start, hooks)
                if hooks.explain:
                    hooks.explanations.append({"pass": spec.name, "stage": spec.stage, "graph": graph_id,
                                               "role": "apply", "error": error.message})
                    continue
                raise error from e
            seconds = time.perf_counter() - start
            after = read_fx(gm, graph_id or "graph")
            changed = fingerprint(after) != before_fp
            names_before = {n.name for n in before.nodes}
            names_after = {n.name for n in after.nodes}
            extra: dict[str, Any] = {
                "pass_kind": spec.kind, "yaml_line": spec.line,
                "inserted": [n.name for n in after.nodes if n.name not in names_before],
                "removed": [n.name for n in before.nodes if n.name not in names_after],
            }
            if skipped:
                extra["skipped"] = skipped
            if result is not None and result is not gm:
                extra["returned_new_graph"] = type(result).__name__
                _returned_new_graph(spec, result, changed, session, graph_id, hooks)
            check: dict[str, Any] | None = None
            if spec.check_results and wants_check and baseline is not None:
                outcome = eager_check.run(gm, inputs) if changed else baseline
                check = eager_check.compare(baseline, outcome)
                baseline = outcome
                extra["eager_check"] = check
            if session is not None and graph_id is not None:
                session.ledger.add_stage(graph_id, name, after, text=fx_text(gm) if changed else None,
                                         changed=changed, seconds=round(seconds, 6), **extra)
            if session is not None:
                for inst in session.instruments:
                    inst.after_pass(name, after)
            hooks.runs.append({"pass": spec.name, "stage": stage, "graph": graph_id, "changed": changed,
                               "seconds": round(seconds, 6), "nodes": len(after.nodes),
                               "node_delta": len(after.nodes) - len(before.nodes), **extra})
            if check is not None and check.get("matches") is False:
                error = PassError(
                    f"pass `{spec.name}` changes the graph's results: " + "; ".join(check["mismatches"][:3])
                    + " (the graph run eagerly before and after the pass, same inputs)",
                    file=spec.file, line=spec.line, column=spec.column,
                    hint="TorchAir requires custom passes to keep results; see the diff with "
                         f"`airctl passes apply ... --diff`, or set check_results: false on `{spec.name}` to "
                         "compile it anyway")
                hooks.errors.append(error)
                raise error
        return None

    run_yaml_passes.__name__ = f"airctl_yaml_{stage}_pass"
    run_yaml_passes.__qualname__ = run_yaml_passes.__name__
    return run_yaml_passes


def _failed(session: Any, graph_id: str | None, name: str, gm: Any, error: BaseException, seconds: float,
            hooks: PassHooks) -> None:
    from airctl.pipeline.capture import fx_text

    if isinstance(error, AirctlError):
        hooks.errors.append(error)
    graph = read_fx(gm, graph_id or "graph")
    if session is None:
        return
    if graph_id is not None:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        session.ledger.add_stage(graph_id, f"failed:{name}", graph, text=fx_text(gm), changed=None,
                                 seconds=round(seconds, 6), error=first)
    for inst in session.instruments:
        inst.after_pass_failed(name, graph, error)


def _returned_new_graph(spec: PassSpec, result: Any, changed: bool, session: Any, graph_id: str | None,
                        hooks: PassHooks) -> None:
    kind = type(result).__name__
    lost = "" if changed else " and left gm unchanged, so none of its changes reach the compiled graph"
    hooks.warnings.append(AirctlError(
        f"pass `{spec.name}` returned a {kind}{lost}: TorchAir ignores a custom pass's return value (R11)",
        file=spec.file, line=spec.line, column=spec.column,
        hint="mutate gm.graph in place (then gm.recompile()) and return None"))
    if session is None:
        return
    try:
        from airctl.verify import finding_for_returned_graph
    except ImportError:
        return
    finding = finding_for_returned_graph(f"yaml:{spec.name}", result, mode=session.mode, changed_in_place=changed,
                                         source=f"{spec.file}:{spec.line}")
    if finding is not None:
        row = finding.to_json()
        row.update(stage=f"yaml:{spec.name}", graph=graph_id)
        session.findings.append(row)

