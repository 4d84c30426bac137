"""The pass runner reads a graph only when its digest changed; a chain of unchanged passes costs digests."""

from __future__ import annotations

from airctl.graph.model import Graph, Node
from airctl.instrument import PassRunner


def test_unchanged_passes_cost_digests_not_reads() -> None:
    obj = {"v": 1}
    reads: list[int] = []

    def read(o, graph_id):
        reads.append(o["v"])
        return Graph(graph_id, "fx", [Node(f"n{o['v']}", "op")])

    runner = PassRunner([], read=read, digest=lambda o: str(o["v"]))
    first = runner.run("a", obj, lambda run: None)
    second = runner.run("b", obj, lambda run: None)
    assert reads == [1]
    assert second.before is first.after and second.after is second.before
    assert second.facts["changed"] is False and second.digest_after == second.digest_before == "1"
    third = runner.run("c", obj, lambda run: obj.update(v=2))
    assert reads == [1, 2] and third.facts["changed"] is True and third.after.nodes[0].name == "n2"
    graph, digest = runner.read_graph(obj, "graph")
    assert graph is third.after and digest == "2" and reads == [1, 2]
    graph, _ = runner.read_graph(obj, "other-graph")  # another graph id is another graph
    assert reads == [1, 2, 2] and graph.name == "other-graph"


def test_forgetting_a_graph_id_drops_its_objects_but_the_one_kept() -> None:
    """The capture forgets the FX graph once TorchAir converted it, and everything once the GE graph is
    optimized: nothing kept alive for the garbage collector to walk; the next look is a read again."""
    fx, ge, other = {"v": 1}, {"v": 2}, {"v": 3}
    reads: list[int] = []

    def read(o, graph_id):
        reads.append(o["v"])
        return Graph(graph_id, "fx", [Node(f"n{o['v']}", "op")])

    runner = PassRunner(read=read, digest=lambda o: str(o["v"]))
    for obj, gid in ((fx, "1-inference"), (ge, "1-inference"), (other, "2-inference")):
        runner.read_graph(obj, gid)
    runner.forget("1-inference", keep=ge)
    for obj, gid in ((fx, "1-inference"), (ge, "1-inference"), (other, "2-inference")):
        runner.read_graph(obj, gid)
    assert reads == [1, 2, 3, 1]  # only the forgotten FX graph is read again
    runner.forget("1-inference")
    runner.read_graph(ge, "1-inference")
    assert reads == [1, 2, 3, 1, 2]


def test_without_a_digest_every_pass_reads_and_fingerprints() -> None:
    g = Graph("g", "fx", [Node("x", "placeholder", kind="placeholder")])
    runner = PassRunner([], read=lambda obj, gid: Graph(gid, "fx", list(obj.nodes)))
    run = runner.run("add", g, lambda run: g.nodes.append(Node("y", "op", ["x"])))
    assert run.digest_before is None and run.facts["changed"] is True and len(run.after) == 2


def test_fx_digest_sees_targets_and_arguments_not_meta() -> None:
    import torch

    from airctl.io.fx_reader import fx_digest

    gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
    before = fx_digest(gm)
    node = next(n for n in gm.graph.nodes if n.op == "call_function" and n.target is torch.relu)
    node.meta["stack_trace"] = "File \"x.py\", line 3"
    assert fx_digest(gm) == before
    node.target = torch.sigmoid
    assert fx_digest(gm) != before
    node.target = torch.relu
    add = next(n for n in gm.graph.nodes if n.op == "call_function" and n is not node)
    add.args = (add.args[0], 2)
    assert fx_digest(gm) != before
