"""What airctl hears from TorchAir during a compile, on either backend, and how it listens.

:func:`observing` patches TorchAir's observer points (:mod:`.graph_transform_observer`,
:mod:`.concrete_graph`) for the length of a ``with`` block and hands every event to a
:class:`CaptureListener` — the pipeline's capture session, which turns them into ledger stages.
TorchAir's own code still runs; nothing is left patched afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from airctl.hooks import (
    compile_signals,
    concrete_graph,
    graph_transform_observer,
    lazy_compiled_model,
    npugraph_ex_observers,
)
from airctl.hooks.patching import Patches


class CaptureListener(Protocol):
    extra_dump_types: Sequence[str]  # GE dump types to write besides the one TorchAir's config names
    final_dump_types: Sequence[str]  # types written of the optimized GE graph only, set ``aside``

    def aside(self, job: Callable[[], Any], then: Callable[[bool], Any]) -> None:
        """Run ``job`` beside the compile (a forked child: it must only write a file); once the run is
        over, call ``then(succeeded)``."""

    def aot_graph(self, gm: Any, phase: str) -> None:
        """TorchAir received the AOT graph of ``phase`` (forward, backward, inference)."""

    def run_fx_pass(self, name: str, gm: Any, run: Callable[[], Any]) -> Any:
        """TorchAir is about to run FX pass ``name`` on ``gm``: call ``run()`` and return its result."""

    def run_ge_pass(self, name: str, ge: Any, run: Callable[[], Any]) -> Any:
        """The same for a GE pass on GE graph ``ge``."""

    def dumped_fx_pass(self, name: str, gm: Any) -> None:
        """An aclgraph pass ran; TorchAir reports it only by dumping its result."""

    def ge_stage(self, file_name: str, ge: Any) -> None:
        """TorchAir dumped the GE graph at a stage (``original_ge_graph``, ``optimized_ge_graph``, ...)."""

    def final_fx(self, concrete: Any, gm: Any) -> None:
        """The FX graph TorchAir converts, after all its FX passes."""

    def torchair_dump(self, path: Path, graph_name: str | None) -> Path | None:
        """TorchAir wrote a graph dump file; returns where the ledger lists it (None: not listed)."""

    def aclgraph_capture(self, graph_name: str, event: dict[str, Any]) -> None:
        """npugraph_ex captured, recaptured or fell back to eager for ``graph_name``: ``event`` has
        ``event`` (capture, recapture, fallback), ``call`` (1-based), ``reason`` and maybe ``key``."""

    def cache_event(self, event: dict[str, Any]) -> None:
        """TorchAir's ``cache_compile`` loaded its cache or compiled: ``kind`` (cache_hit, cache_miss,
        cache_invalidated), ``cache`` (the file), ``function``, ``file``, ``line``, ``key`` (its parts),
        ``code`` (a digest of the method's source)."""


@contextmanager
def observing(listener: CaptureListener) -> Iterator[None]:
    """Send TorchAir's compile events to ``listener`` while the block runs (TorchAir must be importable)."""
    with Patches() as p:
        compile_signals.patch(p)  # a signal during Dynamo's compile is raised where torch can take it
        graph_transform_observer.patch(p, listener)
        concrete_graph.patch(p, listener)
        npugraph_ex_observers.patch(p, listener)  # npugraph_ex's copies, when it is loaded
        lazy_compiled_model.patch(p, listener)  # cache_compile's hit or miss, and its key
        yield
