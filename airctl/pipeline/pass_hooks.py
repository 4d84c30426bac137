"""One TorchAir hook per stage, running the YAML passes of that stage through the pass runner.

TorchAir has exactly two public pass hooks (``config.post_grad_custom_pre_pass`` and
``post_grad_custom_post_pass``), each taking one callable. :func:`compose` folds the passes of a
stage into one such callable that runs each pass, in file order, through
:attr:`PassHooks.runner` (:class:`~airctl.instrument.PassRunner`) as ``yaml:<name>``. The runner's
instruments time it, detect the change, check its results eagerly and snapshot it into the ledger
(a capture gives the hooks its runner; without one, a bare runner with timing, change detection,
the R11 check and the eager check is used, as from a plain TorchAir script). Around that, the composer:

- skips an ``optional`` pass whose selector matches nothing, and fails any other (a
  :class:`~airctl.passes.builtin.SelectorMissed` naming the pass and the closest candidates);
- turns a pass that raises into a :class:`~airctl.errors.PassError` naming the pass, the node and
  the user's traceback (stage ``failed:yaml:<name>`` in the ledger);
- warns about a returned new graph (TorchAir ignores it: rule R11);
- fails the pass, by name, when its eager check says it changed the graph's results.

Errors raised here reach the caller wrapped by Dynamo (``BackendCompilerFailed``), so they are
also kept, unwrapped, in :attr:`PassHooks.errors`; one summary row per pass run is kept in
:attr:`PassHooks.runs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError, PassError
from airctl.instrument import PassRun, PassRunner
from airctl.instrument.stack import pass_instruments
from airctl.modes import Mode
from airctl.passes.builtin import PassFn, SelectorMissed, build
from airctl.passes.placements import of as placements_of
from airctl.passes.plugin import user_traceback
from airctl.passes.select import near_misses, node_infos, select
from airctl.passes.spec import PassFile, PassSpec, load
from airctl.passes.time_limit import PassTimedOut, time_limit
from airctl.signal_guard import user_code


def bare_runner() -> PassRunner:
    """The runner YAML passes use outside a capture: timing, change detection, R11, the eager check."""
    return PassRunner(pass_instruments(Mode.MAX_AUTOTUNE))


@dataclass
class PassHooks:
    """What :func:`build_hooks` returns: the two TorchAir hooks and what they observed."""

    spec: PassFile
    pre_pass: PassFn | None = None
    post_pass: PassFn | None = None
    explain: bool = False
    runner: PassRunner = field(default_factory=bare_runner)  # a capture sets its own before compiling
    warnings: list[AirctlError] = field(default_factory=list)
    errors: list[AirctlError] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    explanations: list[dict[str, Any]] = field(default_factory=list)


def build_hooks(path: Path | str, *, explain: bool = False) -> PassHooks:
    """Parse a YAML pass file and build one TorchAir hook per stage (None where a stage has no pass).

    ``explain=True`` never fails on a selector: it records what each selector matched (or its
    closest candidates) in :attr:`PassHooks.explanations` and applies the passes it can.
    Raises :class:`~airctl.errors.SpecError` for an invalid file or a plugin that cannot load.
    """
    return hooks_for(load(path), Path(path).resolve().parent, explain=explain)


def hooks_for(spec: PassFile, base: Path, *, explain: bool = False) -> PassHooks:
    """:func:`build_hooks` for a parsed pass file (``base``: where its plugin paths are relative to);
    ``airctl bisect`` gives it a file cut down to a prefix of its passes."""
    hooks = PassHooks(spec, explain=explain, warnings=list(spec.warnings))
    for stage in ("pre", "post"):
        bound = [(p, build(p, base)) for p in spec.stage(stage)]
        if bound:
            setattr(hooks, f"{stage}_pass", compose(stage, bound, hooks))
    return hooks


def _graph_kind(graph_id: str | None) -> str | None:
    return graph_id.split("-", 1)[1] if graph_id and "-" in graph_id else None


def _wrap_failure(spec: PassSpec, fn: PassFn, exc: BaseException) -> PassError:
    """A pass that raised, called ``sys.exit`` or ran past its time limit, named with the user's traceback."""
    if isinstance(exc, PassError):
        return exc
    plugin_file = getattr(fn, "airctl_plugin_file", None)
    text, line = user_traceback(exc, plugin_file)
    what = f"python plugin {spec.fields.get('plugin')}" if spec.kind == "python" else f"kind {spec.kind}"
    in_plugin = bool(plugin_file) and line is not None
    if isinstance(exc, PassTimedOut):  # pointed at the limit; the plugin line it was stopped at is in the text
        where = f" (stopped at {plugin_file}:{line})" if in_plugin else ""
        line, column = spec.marks.get("timeout", (spec.line, spec.column))
        return PassError(f"pass `{spec.name}` ({what}) {exc}{where}; the compile was stopped\n{text}",
                         file=spec.file, line=line, column=column,
                         hint=f"a pass that needs longer: set `timeout:` on `{spec.name}` (seconds; 0: no limit); "
                              "one that loops: the traceback shows where it was")
    raised = f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else f"raised {type(exc).__name__}: {exc}"
    if in_plugin:
        file, column = plugin_file, None
    else:
        file, line, column = spec.file, spec.line, spec.column
    return PassError(f"pass `{spec.name}` ({what}) {raised}\n{text}", file=file, line=line,
                     column=column, hint=f"the pass is declared at {spec.file}:{spec.line}; the graph it received "
                                         f"is in the ledger stage before failed:yaml:{spec.name}")


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


class ComposedPass:
    """The TorchAir custom pass of one stage: runs that stage's YAML passes in file order.

    A callable object without ``__dict__``: TorchAir walks ``vars()`` of everything reachable
    from its config (``_check_config_support``) without cycle detection, so a pass that carried
    references to airctl objects would send it round in circles.
    """

    __slots__ = ("stage", "bound", "hooks", "__name__", "__qualname__")

    def __init__(self, stage: str, bound: list[tuple[PassSpec, PassFn]], hooks: PassHooks) -> None:
        self.stage = stage
        self.bound = bound
        self.hooks = hooks  # a capture gives these hooks its runner before compiling
        self.__name__ = self.__qualname__ = f"airctl_yaml_{stage}_pass"

    def __call__(self, gm: Any, example_inputs: Any, config: Any) -> None:
        hooks = self.hooks
        runner = hooks.runner
        graph_id = runner.graph_id()
        kind = _graph_kind(graph_id)
        for spec, fn in self.bound:
            if spec.graphs and kind and kind not in spec.graphs:
                continue
            if hooks.explain:
                hooks.explanations.extend(_explain(spec, gm, graph_id))
            run = _run_one(runner, spec, fn, gm, example_inputs, config, hooks)
            if run is None:
                continue
            facts = run.facts
            if "returned_new_graph" in facts:
                _warn_returned_graph(spec, facts["returned_new_graph"], facts.get("changed"), hooks)
            row_facts = {k: facts[k] for k in ("inserted", "removed", "returned_new_graph", "eager_check")
                         if k in facts}
            if run.info.get("skipped"):
                row_facts["skipped"] = run.info["skipped"]
            assert run.before is not None and run.after is not None
            hooks.runs.append({"pass": spec.name, "stage": self.stage, "graph": graph_id,
                               "changed": facts.get("changed"), "seconds": facts.get("seconds"),
                               "nodes": len(run.after), "node_delta": len(run.after) - len(run.before),
                               "pass_kind": spec.kind, "yaml_line": spec.line, **row_facts})
            check = facts.get("eager_check")
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


def compose(stage: str, bound: list[tuple[PassSpec, PassFn]], hooks: PassHooks) -> ComposedPass:
    """Fold the passes of one stage into a single TorchAir custom pass."""
    return ComposedPass(stage, bound, hooks)


def _run_one(runner: PassRunner, spec: PassSpec, fn: PassFn, gm: Any, example_inputs: Any, config: Any,
             hooks: PassHooks) -> PassRun | None:
    """Run one YAML pass through the runner; None when it failed in explain mode (recorded there)."""

    def apply(run: PassRun) -> Any:
        try:
            with time_limit(spec.timeout), user_code():  # Ctrl-C stops it, even during a compile
                result = fn(gm, example_inputs, config)
            placements = placements_of(fn)
            if placements is not None:
                run.placements = list(placements.found)
                if placements.keep is not None:
                    run.applied_placements = list(placements.keep)
            return result
        except SelectorMissed as e:
            if not (spec.optional or hooks.explain):
                hooks.errors.append(e)
                raise
            run.info["skipped"] = e.message
            return None
        except (Exception, SystemExit, PassTimedOut) as e:  # noqa: BLE001 - user passes: report by name, keep the ledger
            error = _wrap_failure(spec, fn, e)
            hooks.errors.append(error)
            raise error from e

    try:
        return runner.run(f"yaml:{spec.name}", gm, apply, stage=f"yaml:{spec.name}", kind="yaml",
                          example_inputs=example_inputs, check_results=spec.check_results and not hooks.explain,
                          source=f"{spec.file}:{spec.line}", pass_kind=spec.kind, yaml_line=spec.line)
    except PassError as error:
        if hooks.explain and not isinstance(error, SelectorMissed):
            hooks.explanations.append({"pass": spec.name, "stage": spec.stage, "graph": runner.graph_id(),
                                       "role": "apply", "error": error.message})
            return None
        raise


def _warn_returned_graph(spec: PassSpec, kind: str, changed: bool | None, hooks: PassHooks) -> None:
    lost = "" if changed else " and left gm unchanged, so none of its changes reach the compiled graph"
    hooks.warnings.append(AirctlError(
        f"pass `{spec.name}` returned a {kind}{lost}: TorchAir ignores a custom pass's return value (R11)",
        file=spec.file, line=spec.line, column=spec.column,
        hint="mutate gm.graph in place (then gm.recompile()) and return None"))
