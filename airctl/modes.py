"""The words airctl's commands choose from: TorchAir modes, backends, GE dump types, graph formats.

One enum per choice, so validation, ``--help`` and shell completion all come from here (typer
lists an Enum's values). Each member is a ``str``, so ``Mode.MAX_AUTOTUNE == "max-autotune"``
and JSON written with them reads as plain strings.

>>> Mode("reduce-overhead").dumps
('py',)
>>> [m.value for m in Mode]
['max-autotune', 'reduce-overhead', 'npugraph_ex']
>>> Capture("default").dumps(Mode.MAX_AUTOTUNE), Capture("full").dumps(Mode.MAX_AUTOTUNE)
(('txt', 'py'), ('pbtxt', 'txt', 'py'))
"""

from __future__ import annotations

import enum


class Mode(str, enum.Enum):
    """TorchAir's ``config.mode`` (reference/torchair.md §2): GE graphs, or aclgraph code; ``npugraph_ex``
    is aclgraph's successor, the wheel's own package (its compiler, options and op namespace)."""

    MAX_AUTOTUNE = "max-autotune"
    REDUCE_OVERHEAD = "reduce-overhead"
    NPUGRAPH_EX = "npugraph_ex"

    def __str__(self) -> str:
        return self.value

    @property
    def dumps(self) -> tuple[str, ...]:
        """The GE dump types TorchAir accepts in this mode (aclgraph dumps only ``py``; npugraph_ex has no
        graph dump option: its generated code is kept instead)."""
        if self is Mode.NPUGRAPH_EX:
            return ()
        return ("pbtxt", "txt", "py") if self is Mode.MAX_AUTOTUNE else ("py",)

    @property
    def is_ge(self) -> bool:
        return self is Mode.MAX_AUTOTUNE


class Capture(str, enum.Enum):
    """How much of a compile ``airctl compile --capture`` keeps (docs/ledger.md, docs/performance.md).

    Every level lists every stage in ``index.json`` and keeps a snapshot of every distinct graph,
    so ``dump``, ``diff`` and ``check`` work on any of them."""

    MINIMAL = "minimal"  # no readable texts, no TorchAir dumps, INFO log, no report.html
    DEFAULT = "default"  # + readable texts, TorchAir's txt and py dumps (+ pbtxt of the optimized), DEBUG log, report
    FULL = "full"  # + TorchAir's pbtxt dump (every type the mode allows)

    def __str__(self) -> str:
        return self.value

    def dumps(self, mode: Mode) -> tuple[str, ...]:
        """The GE dump types this level asks TorchAir for in ``mode`` (``--dump-type`` overrides)."""
        if self is Capture.MINIMAL:
            return ()
        if self is Capture.DEFAULT and mode.is_ge:
            return ("txt", "py")  # pbtxt is TorchAir's slowest conversion: see final_dumps
        return mode.dumps

    def final_dumps(self, mode: Mode) -> tuple[str, ...]:
        """Dump types TorchAir writes of the optimized GE graph only, in a forked child beside the compile
        (docs/ledger.md): ``default`` keeps TorchAir's own pbtxt of the graph ``airctl dump --type
        pbtxt`` prints, off the compile's time."""
        if self is Capture.DEFAULT and mode.is_ge and "pbtxt" in mode.dumps:  # dumps() leaves it out here
            return ("pbtxt",)
        return ()


class BackendName(str, enum.Enum):
    """``auto`` picks ``npu`` when CANN's libraries load, ``sim`` otherwise."""

    AUTO = "auto"
    NPU = "npu"
    SIM = "sim"

    def __str__(self) -> str:
        return self.value


class DumpType(str, enum.Enum):
    """The graph dump types TorchAir writes (``config.debug.graph_dump.type``)."""

    PBTXT = "pbtxt"
    TXT = "txt"
    PY = "py"

    def __str__(self) -> str:
        return self.value


class GraphFormat(str, enum.Enum):
    """What ``airctl dump --type`` writes: a text format (printed, or written with ``-o``) or a picture."""

    JSON = "json"
    FX = "fx"
    PBTXT = "pbtxt"
    TXT = "txt"
    DOT = "dot"
    SVG = "svg"
    PNG = "png"
    HTML = "html"
    MODEL_EXPLORER = "model-explorer"  # Model Explorer's graph JSON (airctl.io.model_explorer)
    LANES = "lanes"  # the lane view of the stream plan: svg, png or html by the -o suffix

    def __str__(self) -> str:
        return self.value

    @property
    def is_text(self) -> bool:
        """Printed on stdout unless ``-o`` is given (``dot``/``svg``/``png``/``html``/``lanes`` always go to a file)."""
        return self in (GraphFormat.JSON, GraphFormat.FX, GraphFormat.PBTXT, GraphFormat.TXT,
                        GraphFormat.MODEL_EXPLORER)


class Bad(str, enum.Enum):
    """What a failing run looks like (``airctl bisect --bad``, ``airctl compile --fail-on``)."""

    NUMERICS = "numerics"  # compiled outputs differ from eager (or a pass's eager check says so)
    RACE = "race"  # the multi-stream executor reported a stream race
    CHECK = "check"  # the static verifier finds an error-level finding in the final FX graph
    COMPILE = "compile"  # the compile fails

    def __str__(self) -> str:
        return self.value


MAX_AUTOTUNE = Mode.MAX_AUTOTUNE.value
REDUCE_OVERHEAD = Mode.REDUCE_OVERHEAD.value
NPUGRAPH_EX = Mode.NPUGRAPH_EX.value
MODES = tuple(m.value for m in Mode)
CAPTURES = tuple(c.value for c in Capture)
# modes whose graphs TorchAir turns into captured NPU graphs (aclgraph); npugraph_ex is its successor
ACLGRAPH_MODES = (REDUCE_OVERHEAD, "npugraph_ex")
