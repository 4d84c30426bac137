"""What ``_torchair.export`` writes: the ``.air`` file of ``torchair.dynamo_export``.

TorchAir's C++ ``Export`` parses the export graph into a ``ge::Graph`` and calls GE's
``Graph::SaveToFile(export_path_dir/export_name)``: the GE model, a ``ModelDef`` protobuf holding
the graph. GE's serializer writes each tensor descriptor's format also as an integer attribute,
``format_for_int`` (``ge::Format``: ND is 2), which TorchAir's export tests read back. TorchAir's
Python has already written ``dynamo.pbtxt`` (and the weight files) beside it; ATC's offline model
(``.om``) is another CANN tool, not part of this call.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

# ge::Format (metadef external/graph/types.h): the layouts TorchAir writes into descriptors
GE_FORMATS = {"NCHW": 0, "NHWC": 1, "ND": 2, "NC1HWC0": 3, "FRACTAL_Z": 4, "HWCN": 16, "NDHWC": 27,
              "FRACTAL_NZ": 29, "NCDHW": 30}


def _add_format_ints(model: Any) -> None:
    for graph in model.graph:
        for op in graph.op:
            for desc in [*op.input_desc, *op.output_desc]:
                fmt = GE_FORMATS.get(desc.layout or "ND")
                if fmt is not None and "format_for_int" not in desc.attr:
                    desc.attr["format_for_int"].i = fmt


def export(serialized: bytes, options: Mapping[str, Any]) -> None:
    """Write the GE model of ``serialized`` to ``options["export_path_dir"]/options["export_name"]``,
    with the checks and messages of TorchAir's C++ (both options given, the target not a link)."""
    from airctl.io.ge_schema import message_class

    for key, word in (("export_path_dir", "Export_path"), ("export_name", "Export_name")):
        if key not in options:
            raise RuntimeError(f"{word} is none when export graph")
    target = Path(str(options["export_path_dir"])) / str(options["export_name"])
    if target.is_symlink():
        raise RuntimeError("Target file path should not be an symbolic link")
    model = message_class("ModelDef").FromString(bytes(serialized))  # refuses what is not a GE model
    _add_format_ints(model)
    target = target.absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(model.SerializeToString())
