"""Test input: the hand-written multi-stream pass of TorchAir's custom-pass documentation.

Copied (the pass function only) from /work/shared/examples/custom_pass_multistream.py, which is
TorchAir-docs user code; that script compiles a model at import, so it is not imported here.
passes/stream.yaml must produce exactly the graph this function produces.
"""

import torch


def _custom_pre_pass(gm, example_inputs, config):
    fx_graph = gm.graph
    for node in fx_graph.nodes:
        if node.op == "call_function" and node.target == torch.ops.aten.mm.default:
            with fx_graph.inserting_before(node):
                # nodes between scope_enter and scope_exit run on the new stream stream_1
                fx_graph.call_function(torch.ops.air.scope_enter.default,
                                       args=(["_user_stream_label"], ["stream_1"]))
        if node.op == "call_function" and node.target == torch.ops.aten.abs.default:
            with fx_graph.inserting_after(node):
                # record after abs
                record_node = fx_graph.call_function(torch.ops.air.record.default, args=())
            with fx_graph.inserting_after(record_node):
                fx_graph.call_function(torch.ops.air.scope_exit.default, args=())
        # sub waits until everything before the record has run
        if node.op == "call_function" and node.target == torch.ops.aten.sub.Tensor:
            with fx_graph.inserting_before(node):
                fx_graph.call_function(torch.ops.air.wait.default, args=([record_node],))
