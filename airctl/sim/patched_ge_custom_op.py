"""Patch of one TorchAir function: ``torchair.ge.custom_op`` (the converter API for custom ops).

A converter that calls ``custom_op("ScaledAdd", inputs={...}, outputs=[...], attrs={...})`` names
the op's whole IR, and TorchAir uses only those names; but it first asks CANN's registry whether
``ScaledAdd`` exists. For the length of a sim session the wrapper tells the session's IR table
(:class:`~airctl.sim.ascend_ir.AscendIr`) that such a call is in progress, so an undeclared op
called this way is answered from the call itself. Positional calls pass through unchanged (they
need the registry's lists: a declaration). A keyword call whose arguments are not what TorchAir
accepts (an ``int`` for ``inputs``) is answered with the IR it does describe, so that TorchAir's
own validation, which runs after the registry has answered, says what is wrong. TorchAir's
original does all the work.
"""

from __future__ import annotations

import functools
from typing import Any

from airctl.hooks.patching import Patches


def patch(p: Patches, table: Any) -> None:
    import torchair.ge as ge_package
    from torchair.ge import ge_custom

    original = ge_custom.custom_op

    def custom_op(op_type: str, *args: Any, inputs: Any = None, outputs: Any = None, attrs: Any = None,
                  node_name: Any = None) -> Any:
        if args:
            return original(op_type, *args, inputs=inputs, outputs=outputs, attrs=attrs, node_name=node_name)
        with table.keyword_call(op_type, inputs, outputs, attrs):
            return original(op_type, inputs=inputs, outputs=outputs, attrs=attrs, node_name=node_name)

    functools.update_wrapper(custom_op, original)  # TorchAir's name and module: its public-API checks read them
    p.setattr(ge_custom, "custom_op", custom_op)
    p.setattr(ge_package, "custom_op", custom_op)
