"""The custom FX pass from TorchAir's documentation (post_grad_custom_pass example), as a test input."""

import torch


def custom_pre_pass(gm, example_inputs, config):
    fx_graph = gm.graph
    record_node = None
    for node in fx_graph.nodes:
        if node.op == "call_function" and node.target == torch.ops.aten.mm.default:
            with fx_graph.inserting_before(node):
                fx_graph.call_function(torch.ops.air.scope_enter.default, args=(["_user_stream_label"], ["stream_1"]))
        if node.op == "call_function" and node.target == torch.ops.aten.abs.default:
            with fx_graph.inserting_after(node):
                record_node = fx_graph.call_function(torch.ops.air.record.default, args=())
            with fx_graph.inserting_after(record_node):
                fx_graph.call_function(torch.ops.air.scope_exit.default, args=())
        if node.op == "call_function" and node.target == torch.ops.aten.sub.Tensor:
            with fx_graph.inserting_before(node):
                fx_graph.call_function(torch.ops.air.wait.default, args=([record_node],))
