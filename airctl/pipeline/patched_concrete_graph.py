"""Patch of two TorchAir internals: ``save_fx_graph`` and ``dump`` of its concrete graphs.

- ``GeConcreteGraph.save_fx_graph`` / ``AclConcreteGraph.save_fx_graph`` receive the final FX
  graph TorchAir converts (after every FX pass and scope validation): airctl records it as the
  ``fx-final`` stage and keeps the concrete graph to collect its generated code later.
- ``GeConcreteGraph.dump(path)`` writes TorchAir's ``dynamo_{original,optimized}_graph_*`` dump
  in the one type the config names. TorchAir takes one type per compile; when the active
  session asks for more, the same graph is also written with TorchAir's own ``dump_graph`` under
  the same name with the other extensions. Every file is TorchAir's output.
"""

from __future__ import annotations

from pathlib import Path

_patched = False


def install() -> None:
    global _patched
    if _patched:
        return
    from torchair._acl_concrete_graph.fx2acl_converter import AclConcreteGraph
    from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph
    from torchair._ge_concrete_graph.utils import dump_graph

    from airctl.pipeline.capture import current_session

    for cls in (GeConcreteGraph, AclConcreteGraph):
        orig_save = cls.save_fx_graph

        def save_fx_graph(self, graph_module, _orig=orig_save):
            session = current_session()
            _orig(self, graph_module)
            if session is not None:
                session.final_fx(self, graph_module)

        cls.save_fx_graph = save_fx_graph

    orig_dump = GeConcreteGraph.dump

    def dump(self, path):
        orig_dump(self, path)
        session = current_session()
        if session is None:
            return
        base = Path(path)
        session.torchair_dump(base, self.graph.name)
        for ext in session.extra_dump_types:
            other = base.with_suffix("." + ext)
            if other != base:
                dump_graph(str(other), self.graph)
                session.torchair_dump(other, self.graph.name)

    GeConcreteGraph.dump = dump

    orig_acl_dump = AclConcreteGraph.dump

    def acl_dump(self, path):
        orig_acl_dump(self, path)
        session = current_session()
        if session is not None:
            session.torchair_dump(Path(path), self.fx_graph_name)

    AclConcreteGraph.dump = acl_dump
    _patched = True
