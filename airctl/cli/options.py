"""Options several commands share, typed by the enums of :mod:`airctl.modes`.

Typer turns an Enum into a choice: ``--help`` lists the values, shells complete them, and a value
that is not one of them is click's usage error (exit 2) naming the choices. The strings accepted
are exactly the enums' values. ``--dump-type`` is a comma-separated list, checked item by item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from airctl.execute.compare import DEFAULT_ATOL
from airctl.modes import BackendName, Capture, DumpType, Mode

DUMP_TYPES = tuple(t.value for t in DumpType)


def mode_option(default: Mode | None = Mode.MAX_AUTOTUNE, help: str = "TorchAir mode: GE graphs (max-autotune), "
                "aclgraph (reduce-overhead) or its successor npugraph_ex.", **kwargs: Any) -> Any:
    return typer.Option(default, "--mode", "-m", help=help, **kwargs)


def entry_option(**kwargs: Any) -> Any:
    """``--entry``: which function of the model script gives the model and its inputs (either form
    :func:`airctl.pipeline.run.model_script.load_model_script` reads)."""
    return typer.Option(None, "--entry", show_default=False,
                        help="Function returning (model, inputs), or MODEL_FN,INPUTS_FN.", **kwargs)


def config_option(**kwargs: Any) -> Any:
    """``--option KEY=VALUE`` (repeatable): one option of the mode's config (pipeline/compile/npugraph_ex.py)."""
    return typer.Option(None, "--option", metavar="KEY=VALUE", show_default=False,
                        help="Set an option of the mode's config, repeatable: npugraph_ex's (capture_limit=4, "
                             "force_eager=True, ...) or TorchAir's, dotted (debug.run_eagerly=True). Checked against "
                             "the config (an unknown key: the closest names), recorded in index.json.", **kwargs)


def backend_option(**kwargs: Any) -> Any:
    return typer.Option(BackendName.AUTO, "--backend", "-b", help="auto: npu when CANN loads, else sim.", **kwargs)


def atol_option(**kwargs: Any) -> Any:
    """``--atol``: the tolerance of every check against eager PyTorch (:data:`~airctl.execute.compare.DEFAULT_ATOL`)."""
    return typer.Option(DEFAULT_ATOL, "--atol", help="Tolerance for the eager comparison.", **kwargs)


def capture_option() -> Any:
    return typer.Option(
        Capture.DEFAULT, "--capture",
        help="How much the ledger keeps: minimal (stages and snapshots only), default (+ readable texts, "
             "TorchAir's txt/py dumps and the optimized GE graph's pbtxt, log, report.html), full (+ every pbtxt, "
             "TorchAir's per-node log).")


def dump_types_option() -> Any:
    return typer.Option(
        None, "--dump-type", metavar="[" + "|".join(DUMP_TYPES) + "],...", callback=check_dump_types,
        autocompletion=complete_dump_types, show_default=False,
        help="GE dump types, comma-separated: " + ",".join(DUMP_TYPES) + " (default: all three in max-autotune, "
             "py in reduce-overhead).")


def dump_types(value: str | None) -> list[str] | None:
    """``"pbtxt, txt"`` -> ``["pbtxt", "txt"]``; None (TorchAir's defaults for the mode) when empty."""
    items = [t.strip() for t in (value or "").split(",") if t.strip()]
    return items or None


def check_dump_types(value: str | None) -> str | None:
    for item in dump_types(value) or []:
        if item not in DUMP_TYPES:
            raise typer.BadParameter(f"{item!r} is not one of " + ", ".join(repr(t) for t in DUMP_TYPES) + ".")
    return value


def complete_dump_types(incomplete: str) -> list[str]:
    """Shell completion of the item after the last comma."""
    done, _, last = incomplete.rpartition(",")
    chosen = set(dump_types(done) or [])
    prefix = f"{done}," if done else ""
    return [prefix + t for t in DUMP_TYPES if t.startswith(last.strip()) and t not in chosen]


OUT_ENV = "AIRCTL_OUT"
RUNS_DIR = Path("airctl-runs")


def out_option(help: str = "Folder of ledgers (runs): where new runs go, and where the current run is.",
               *names: str, **kwargs: Any) -> Any:
    """The folder of ledgers (``--out``, or ``AIRCTL_OUT``): every command reads and writes runs there."""
    return typer.Option(RUNS_DIR, *(names or ("--out", "-o")), envvar=OUT_ENV, show_envvar=True, help=help, **kwargs)


def run_option(help: str = "Use this run instead of the current one: a run id from `airctl runs` (a unique part "
               "is enough) or a ledger folder.", **kwargs: Any) -> Any:
    return typer.Option(None, "--run", "-r", metavar="RUN", show_default=False, help=help, **kwargs)


def runs_option(**kwargs: Any) -> Any:
    """The folder of ledgers for commands whose ``-o/--out`` is their own output (repro, export)."""
    return typer.Option(RUNS_DIR, "--runs", envvar=OUT_ENV, show_envvar=True, metavar="DIR",
                        help="Folder of ledgers where RUN is (and the current run).", **kwargs)


# the TIMES sources (airctl.pipeline.predict_times.SOURCES), as --help of every command taking --times says them
TIMES_SOURCES_HELP = ("a CSV (node,us[,cores] or op,us[,cores]), a torch_npu profiler folder, or `estimate` (from "
                      "shapes against --device)")


RUN_ARGUMENT_HELP = ("The run: a run id from `airctl runs` (a unique part is enough), `latest`, `latest~N` (the N-th "
                     "run before it), or a ledger (or rank) folder; default: the current run.")


def run_argument(help: str = RUN_ARGUMENT_HELP) -> Any:
    return typer.Argument(None, metavar="[RUN]", show_default=False, help=help)


def command_line(ctx: typer.Context) -> list[str] | None:
    """The airctl command being run, as typed (recorded in the ledger as what made the run); ``ctx`` is
    the command's context (a ``ctx: typer.Context`` parameter)."""
    argv = ctx.find_root().meta.get("airctl.argv")
    return ["airctl", *argv] if argv is not None else None
