"""The words airctl's commands choose from: TorchAir modes, backends, GE dump types, graph formats.

One enum per choice, so validation, ``--help`` and shell completion all come from here (typer
lists an Enum's values). Each member is a ``str``, so ``Mode.MAX_AUTOTUNE == "max-autotune"``
and JSON written with them reads as plain strings.

A :class:`Mode` travels as itself from the command line to the ledger; what it means to the code
that checks, runs, draws and predicts its graphs is one row of a table (:class:`Meaning`), read
through its properties, so no module compares mode strings. Text from files (``index.json``,
finding rows, DEBUG logs, pass files) becomes a Mode through :meth:`Mode.parse`, which takes the
spellings those files use.

>>> Mode("reduce-overhead").dumps
('py',)
>>> [m.value for m in Mode]
['max-autotune', 'reduce-overhead', 'npugraph_ex']
>>> Mode.parse("NPUGRAPH-EX"), Mode.parse("ge"), Mode.parse("aclgraph")
(<Mode.NPUGRAPH_EX: 'npugraph_ex'>, <Mode.MAX_AUTOTUNE: 'max-autotune'>, <Mode.REDUCE_OVERHEAD: 'reduce-overhead'>)
>>> Mode.NPUGRAPH_EX.semantics, Mode.NPUGRAPH_EX.stream_namespace
(<Mode.REDUCE_OVERHEAD: 'reduce-overhead'>, 'npugraph_ex')
>>> Capture("default").dumps(Mode.MAX_AUTOTUNE), Capture("full").dumps(Mode.MAX_AUTOTUNE)
(('txt', 'py'), ('pbtxt', 'txt', 'py'))
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from airctl.errors import AirctlError


class Choice(str, enum.Enum):
    """A ``str`` enum whose ``str()`` and f-string are its value, as typed on the command line."""

    def __str__(self) -> str:
        return self.value


class Mode(Choice):
    """TorchAir's ``config.mode`` (reference/torchair.md §2): GE graphs, or aclgraph code; ``npugraph_ex``
    is aclgraph's successor, the wheel's own package (its compiler, options and op namespace)."""

    MAX_AUTOTUNE = "max-autotune"
    REDUCE_OVERHEAD = "reduce-overhead"
    NPUGRAPH_EX = "npugraph_ex"

    @classmethod
    def parse(cls, text: str | Mode) -> Mode:
        """The mode ``text`` names, in any spelling files use: any case, ``-`` or ``_``, and the
        semantics' names ``ge`` (max-autotune) and ``aclgraph`` (reduce-overhead); an :class:`UnknownMode`
        error otherwise."""
        found = cls.lookup(text)
        if found is None:
            raise UnknownMode(f"unknown mode {text!r}: use max-autotune, reduce-overhead or npugraph_ex",
                              hint="the mode names TorchAir's config.mode (GE or aclgraph) or npugraph_ex")
        return found

    @classmethod
    def lookup(cls, text: str | Mode) -> Mode | None:
        """:meth:`parse` for text that may name no mode (a timeline's label ``npu-profile``): None then."""
        if isinstance(text, Mode):
            return text
        return _SPELLINGS.get(str(text).strip().lower().replace("_", "-"))

    @property
    def meaning(self) -> Meaning:
        """This mode's row of :data:`MEANINGS`."""
        return MEANINGS[self]

    @property
    def semantics(self) -> Mode:
        """The multi-stream semantics the verifier, executor, lane view and predictor apply: GE's
        (``max-autotune``) or aclgraph's (``reduce-overhead``; npugraph_ex runs aclgraph's, §2.2)."""
        return MEANINGS[self].semantics

    @property
    def is_ge(self) -> bool:
        """GE's semantics: TorchAir converts the graph to GE, which orders cross-stream data edges itself."""
        return MEANINGS[self].semantics is Mode.MAX_AUTOTUNE

    @property
    def is_aclgraph(self) -> bool:
        """aclgraph's semantics: the FX graph is captured and replayed as one NPU graph."""
        return MEANINGS[self].semantics is Mode.REDUCE_OVERHEAD

    @property
    def is_npugraph_ex(self) -> bool:
        return self is Mode.NPUGRAPH_EX

    @property
    def stream_namespace(self) -> str:
        """The op namespace of the stream ops this mode's compiler recognises (``torch.ops.<ns>``)."""
        return MEANINGS[self].namespace

    @property
    def dumps(self) -> tuple[str, ...]:
        """The GE dump types TorchAir accepts in this mode."""
        return MEANINGS[self].dumps


class UnknownMode(AirctlError, ValueError):
    """A mode name that is none of :class:`Mode`'s (in a file, or given to a library function)."""


@dataclass(frozen=True)
class Meaning:
    """What a mode means to the code that checks, runs, draws and predicts its graphs (one row of :data:`MEANINGS`)."""

    semantics: Mode  # whose stream rules apply (reference/torchair.md §2.1 GE, §2.2 aclgraph)
    namespace: str  # torch.ops.<namespace> of the stream ops its compiler recognises
    reader: str  # who reads those ops, as messages name it
    replays: str  # the dialect of the graph one step runs on the device: "ge" (GE's graph) or "fx" (captured)
    syncs_data_edges: bool  # the device orders every cross-stream data edge itself (GE), not only record/wait
    launch_us: float  # host-side cost of one graph execution, µs: GE's RunGraph or an aclgraph replay
    memory_rule: str  # how the device plans the step's memory (airctl.predict.memory)
    dumps: tuple[str, ...]  # GE dump types TorchAir accepts (aclgraph: py only; npugraph_ex has no dump option)
    static_kernel_option: str | None  # the option that makes its compiler build static-shape kernels


MEANINGS: dict[Mode, Meaning] = {
    Mode.MAX_AUTOTUNE: Meaning(
        semantics=Mode.MAX_AUTOTUNE, namespace="air", reader="TorchAir", replays="ge", syncs_data_edges=True,
        launch_us=40.0, memory_rule="GE static plan", dumps=("pbtxt", "txt", "py"), static_kernel_option=None),
    Mode.REDUCE_OVERHEAD: Meaning(
        semantics=Mode.REDUCE_OVERHEAD, namespace="air", reader="TorchAir", replays="fx", syncs_data_edges=False,
        launch_us=15.0, memory_rule="aclgraph capture pool", dumps=("py",),
        static_kernel_option="experimental_config.aclgraph._aclnn_static_shape_kernel"),
    Mode.NPUGRAPH_EX: Meaning(
        semantics=Mode.REDUCE_OVERHEAD, namespace="npugraph_ex", reader="npugraph_ex", replays="fx",
        syncs_data_edges=False, launch_us=15.0, memory_rule="aclgraph capture pool", dumps=(),
        static_kernel_option="static_kernel_compile"),
}
# what Mode.parse accepts, lower case with "-" for "_": each value, and the semantics' own names
_SPELLINGS: dict[str, Mode] = {**{m.value.replace("_", "-"): m for m in Mode},
                               "ge": Mode.MAX_AUTOTUNE, "aclgraph": Mode.REDUCE_OVERHEAD}


class Capture(Choice):
    """How much of a compile ``airctl compile --capture`` keeps (docs/ledger.md, docs/performance.md).

    Every level lists every stage in ``index.json`` and keeps a snapshot of every distinct graph,
    so ``dump``, ``diff`` and ``check`` work on any of them."""

    MINIMAL = "minimal"  # no readable texts, no TorchAir dumps, INFO log, no report.html
    DEFAULT = "default"  # + readable texts, TorchAir's txt and py dumps (+ pbtxt of the optimized), DEBUG log, report
    FULL = "full"  # + TorchAir's pbtxt dump (every type the mode allows)

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


class BackendName(Choice):
    """``auto`` picks ``npu`` when CANN's libraries load, ``sim`` otherwise."""

    AUTO = "auto"
    NPU = "npu"
    SIM = "sim"


class DumpType(Choice):
    """The graph dump types TorchAir writes (``config.debug.graph_dump.type``)."""

    PBTXT = "pbtxt"
    TXT = "txt"
    PY = "py"


class GraphFormat(Choice):
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

    @property
    def is_text(self) -> bool:
        """Printed on stdout unless ``-o`` is given (``dot``/``svg``/``png``/``html``/``lanes`` always go to a file)."""
        return self in (GraphFormat.JSON, GraphFormat.FX, GraphFormat.PBTXT, GraphFormat.TXT,
                        GraphFormat.MODEL_EXPLORER)


class Bad(Choice):
    """What a failing run looks like (``airctl bisect --bad``, ``airctl compile --fail-on``)."""

    NUMERICS = "numerics"  # compiled outputs differ from eager (or a pass's eager check says so)
    RACE = "race"  # the multi-stream executor reported a stream race
    CHECK = "check"  # the static verifier finds an error-level finding in the final FX graph
    COMPILE = "compile"  # the compile fails


CAPTURES = tuple(c.value for c in Capture)
