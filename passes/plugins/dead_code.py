"""An example python plugin: TorchAir's custom-pass signature, mutating gm in place.

Removes nodes whose results nobody uses (FX's own dead-code elimination; air.scope_enter,
scope_exit and wait are registered as side-effecting, so stream scopes survive it — a record
survives while a wait uses it). Declared in passes/python_plugin.yaml.
"""


def remove_dead_code(gm, example_inputs, config):
    if gm.graph.eliminate_dead_code():
        gm.recompile()
