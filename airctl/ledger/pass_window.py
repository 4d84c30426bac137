"""Which stages of a ledger show *the user's* passes: plain ``airctl diff`` compares those.

Comparing the first AOT stage with the last FX stage would mix TorchAir's own passes (seven
``view → reshape`` from ``view_to_reshape``, the aclgraph event closure) into what the user's YAML
passes did. When the run has YAML pass stages
(``yaml:<name>``), the window is the stage just before the first of them → the last of them; the
FX passes of TorchAir that changed the graph are listed apart: those inside the window (their
changes are in the diff: pre and post passes around TorchAir's built-ins) and those outside it.

>>> from airctl.ledger.index import RunIndex
>>> names = ["dynamo", "aot-inference", "yaml:a", "after:post_grad_custom_pre_pass", "after:view_to_reshape",
...          "fx-final", "after:apply_event_closure_with_multi_stream"]
>>> index = RunIndex.from_json({"graphs": [{"id": "1-inference", "stages": [
...     {"index": i, "name": n, "file": f"{i}.json", "changed": n != "dynamo"} for i, n in enumerate(names)]}]})
>>> w = user_pass_window(index.stages("1-inference"))
>>> w.before.name, w.after.name, w.user_passes, w.torchair_inside, w.torchair_outside
('aot-inference', 'yaml:a', ['a'], [], ['view_to_reshape', 'apply_event_closure_with_multi_stream'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from airctl.ledger.index import StageRef

YAML = "yaml:"
OUR_HOOKS = ("post_grad_custom_pre_pass", "post_grad_custom_post_pass")  # the hooks that run the YAML passes


@dataclass
class PassWindow:
    before: StageRef
    after: StageRef
    user_passes: list[str] = field(default_factory=list)
    torchair_inside: list[str] = field(default_factory=list)  # changed the graph between two user passes
    torchair_outside: list[str] = field(default_factory=list)  # changed it before or after them: not in the diff

    def to_json(self) -> dict[str, Any]:
        return {"graph": self.before.graph_id, "from": self.before.name, "to": self.after.name,
                "user_passes": self.user_passes, "torchair_inside": self.torchair_inside,
                "torchair_outside": self.torchair_outside}


def _torchair_pass(stage: StageRef) -> str | None:
    """The TorchAir FX pass a stage is after, when it changed the graph (our own hooks excluded)."""
    name = stage.name
    if not name.startswith("after:") or stage.entry.changed is not True or stage.dialect != "fx":
        return None
    pass_name = name.removeprefix("after:")
    return None if pass_name in OUR_HOOKS else pass_name


def user_pass_window(stages: list[StageRef]) -> PassWindow | None:
    """The user's passes' window of one graph's stages, or None when no YAML pass ran in it."""
    yaml = [i for i, s in enumerate(stages) if s.name.startswith(YAML)]
    if not yaml or yaml[0] == 0:
        return None
    first, last = yaml[0], yaml[-1]
    window = PassWindow(stages[first - 1], stages[last],
                        [stages[i].name.removeprefix(YAML) for i in yaml])
    for i, stage in enumerate(stages):
        name = _torchair_pass(stage)
        if name is not None:
            (window.torchair_inside if first < i < last else window.torchair_outside).append(name)
    return window
