"""Known causes of a mismatch with eager, checked by compiling once more with the suspect switched off.

"a pass changed the results" leaves the user to bisect. Some causes are known and cheap to test:
TorchAir's reinplace pass (aclgraph's ``reinplace_inplaceable_ops_pass``) rewrites an out-of-place
op into an in-place one that can write into a view overlapping what it reads (docs/sim.md, "a
reinplace that reads what it writes": transformers' decoder LMs called without a mask). When a
run in reduce-overhead or npugraph_ex mismatches (or fails with torch's "refer to a single memory
location") and that pass changed its graph, the model is
compiled again with the pass off (into a scratch folder: the current run stays this one); if the
outputs then match, the hint names the pass and the ``--option`` that switches it off.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError, ExecutionMismatch
from airctl.modes import Mode

REINPLACE_STAGES = ("after:reinplace_inplaceable_ops_pass", "after:reinplace_input_mutated_ops")
# the switch per mode: npugraph_ex's own option, aclgraph's debug flag (docs/sim.md)
REINPLACE_OFF = {Mode.NPUGRAPH_EX: ("inplace_pass", "False"),
                 Mode.REDUCE_OVERHEAD: ("debug.aclgraph.disable_reinplace_inplaceable_ops_pass", "True")}


# what torch says when an in-place op writes memory it also reads (the reinplace pass made it so)
OVERLAP = "refer to a single memory location"


def _suspect(error: Any) -> bool:
    return isinstance(error, ExecutionMismatch) or (isinstance(error, AirctlError) and OVERLAP in error.message)


def _reinplace_changed(index: Any) -> bool:
    return any(s.name in REINPLACE_STAGES and s.changed for g in index.graphs for s in g.stages)


def explain_mismatch(req: Any, result: Any, progress: Any, compile_again: Callable[[Any], Any]) -> Any:
    """``result`` with its mismatch's hint naming a known cause, when compiling again (``compile_again``,
    the compiler's own entry, given by it) shows it."""
    error = result.error
    switch = REINPLACE_OFF.get(req.target.mode)
    if (not _suspect(error) or switch is None or req.bisect is not None
            or req.rank is not None or switch[0] in req.target.options or not _reinplace_changed(result.index)):
        return result
    if progress is not None:
        progress(f"outputs differ: compiling again with {switch[0]}={switch[1]} (TorchAir's reinplace pass off)")
    scratch = Path(tempfile.mkdtemp(prefix="airctl-cause-"))
    try:
        target = dataclasses.replace(req.target, options={**req.target.options, switch[0]: switch[1]})
        again = compile_again(dataclasses.replace(req, target=target, out_dir=scratch, report=False,
                                                  command_line=None))
    except Exception:  # a second opinion never replaces the first error
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if again.error is not None or not (again.index.execution or {}).get("matches_eager"):
        return result
    error.hint = (f"TorchAir's reinplace pass (reinplace_inplaceable_ops_pass) causes it: compiled again with "
                  f"`--option {switch[0]}={switch[1]}` the outputs match eager; it rewrites an op into an in-place "
                  f"write that overlaps what it reads (docs/sim.md). Otherwise: `airctl diff` between the stages "
                  f"after:reinplace_inplaceable_ops_pass and the one before it")
    if result.session is not None:
        result.session.ledger.set_error(error.message, error.to_json())
    return result
