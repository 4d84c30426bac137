"""Patch of TorchAir internals (both backends): ``save_fx_graph``, ``dump`` and ``compile`` of its concrete graphs.

- ``GeConcreteGraph.save_fx_graph`` / ``AclConcreteGraph.save_fx_graph`` receive the final FX
  graph TorchAir converts (after every FX pass and scope validation): the listener records it as
  the ``fx-final`` stage and keeps the concrete graph to collect its generated code later.
- ``GeConcreteGraph.dump(path)`` writes TorchAir's ``dynamo_{original,optimized}_graph_*`` dump
  in the one type the config names. TorchAir takes one type per compile; when the listener asks
  for more (``extra_dump_types``), the same graph is also written with TorchAir's own
  ``dump_graph`` under the same name with the other extensions; ``final_dump_types`` are written
  of the optimized graph only, by a child process forked when TorchAir dumps it
  (``listener.aside``: the same live GraphDef, copied on write; TorchAir's pbtxt lists a node's
  attributes in the order of its in-memory map, which no copy made in Python keeps), while the
  compile goes on. Every file is TorchAir's output.
- ``GeConcreteGraph.compile`` is GE's build: when it allocated streams (sim's stand-in with
  ``ge.autoMultistreamParallelMode``, :mod:`airctl.sim.ge_build`), the listener's ``ge_build`` gets
  the graph GE's build dump would show (the ``ge-build`` stage).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airctl.hooks.patching import Patches


def patch_save_fx_graph(p: Patches, cls: Any, listener: Any) -> None:
    """``cls.save_fx_graph`` (a concrete graph class of TorchAir's, or npugraph_ex's copy) hands the
    final FX graph to the listener too."""
    original = cls.save_fx_graph

    def save_fx_graph(self: Any, graph_module: Any) -> None:
        original(self, graph_module)
        listener.final_fx(self, graph_module)

    p.setattr(cls, "save_fx_graph", save_fx_graph)


def patch(p: Patches, listener: Any) -> None:
    from torchair._acl_concrete_graph.fx2acl_converter import AclConcreteGraph
    from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph
    from torchair._ge_concrete_graph.utils import dump_graph

    for cls in (GeConcreteGraph, AclConcreteGraph):
        patch_save_fx_graph(p, cls, listener)

    orig_compile = GeConcreteGraph.compile

    def compile(self):
        fresh = not getattr(self, "_is_compiled", False)
        result = orig_compile(self)
        built = getattr(self.graph._executor, "ge_build", None) if fresh else None
        report = getattr(listener, "ge_build", None)
        if built is not None and report is not None:  # sim's GE build allocated streams (sim/ge_build.py)
            report(self.graph.name, built.graph)
        return result

    p.setattr(GeConcreteGraph, "compile", compile)

    orig_dump = GeConcreteGraph.dump

    def dump(self, path):
        orig_dump(self, path)
        base = Path(path)
        listener.torchair_dump(base, self.graph.name)
        for ext in listener.extra_dump_types:
            other = base.with_suffix("." + ext)
            if other != base:  # TorchAir's own writer, the file then listed
                dump_graph(str(other), self.graph)
                listener.torchair_dump(other, self.graph.name)
        if base.name.startswith("dynamo_optimized"):
            import torch._inductor.utils  # noqa: F401 - the pbtxt writer's import, made before forking

            for ext in listener.final_dump_types:
                other = base.with_suffix("." + ext)

                def listed(ok: bool, other: Path = other, name: str = self.graph.name) -> None:
                    if ok:
                        listener.torchair_dump(other, name)
                    else:  # the child failed or was stopped: no half-written dump left behind
                        other.unlink(missing_ok=True)

                listener.aside(lambda other=other, graph=self.graph: dump_graph(str(other), graph), listed)

    orig_acl_dump = AclConcreteGraph.dump

    def acl_dump(self, path):
        orig_acl_dump(self, path)
        listener.torchair_dump(Path(path), self.fx_graph_name)

    p.setattr(GeConcreteGraph, "dump", dump)
    p.setattr(AclConcreteGraph, "dump", acl_dump)
