"""The instruments around every pass, in their one order: what a capture and a bare runner both use.

Before-hooks run in this order and after-hooks in reverse (:mod:`airctl.instrument`), so the order
is the contract: the snapshot, outermost, writes the ledger stage with everything the inner ones
found; the caller's instruments (verify-each, bisect's layerwise compare) come next; then R11's
returned-graph check and the eager check, innermost, closest to the pass. A capture
(:class:`~airctl.pipeline.compile.capture.CaptureSession`) and YAML passes run outside one
(:func:`airctl.pipeline.pass_hooks.bare_runner`) build their runner from :func:`pass_instruments`, so the
two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from airctl.instrument import Instrument
from airctl.instrument.eager_check import EagerCheck
from airctl.instrument.returned_graph import ReturnedGraph
from airctl.modes import Mode


def pass_instruments(mode: Mode, *, snapshot: Instrument | None = None,
                     callers: Sequence[Instrument] = ()) -> list[Instrument]:
    """Outermost first: ``snapshot`` (when the passes are recorded), ``callers``, R11, the eager check."""
    return [*([snapshot] if snapshot is not None else []), *callers, ReturnedGraph(mode), EagerCheck()]
