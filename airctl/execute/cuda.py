"""The executor on real CUDA streams, for graphs whose tensors live on a CUDA device.

This machine's torch is the CPU wheel (tests/execute/test_cuda_path.py checks the stream/event
calls against a recording stand-in for ``torch.cuda``); ``bench/bench_cuda_streams.py`` runs it on
a GPU (an H100's figures are in docs/execute.md). The CPU executor's bookkeeping is
reused unchanged (same schedule, same vector clocks, same race and deadlock reports); what
changes is how nodes are issued:

- all nodes are issued from the calling thread in graph order (the serial loop), each inside
  ``torch.cuda.stream(s)`` for its stream, so the GPU overlaps the streams, not Python threads;
- every sync of the mode (record/wait, closure events, GE data edges in max-autotune) becomes a
  ``torch.cuda.Event`` recorded after its source node and waited on by the destination stream;
  an unsynchronised cross-stream read gets no event: it is a real race on the GPU too, and it is
  reported as one (outputs may then differ from eager, as they would on the device);
- side streams wait for the calling stream when the run starts and the calling stream waits for
  every side stream before returning (the graph boundary, as TorchAir's fork/join events do).

Event times in the timeline are host issue times, not kernel times.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airctl.execute.executor import StreamExecutor
from airctl.execute.run_state import RunState
from airctl.graph.roles import Role
from airctl.modes import Mode


def wants_cuda(args: Sequence[Any]) -> bool:
    """True when CUDA is available and some argument is a CUDA tensor."""
    import torch

    return torch.cuda.is_available() and any(isinstance(a, torch.Tensor) and a.is_cuda for a in args)


class CudaStreamExecutor(StreamExecutor):
    def __init__(self, gm: Any, mode: Mode = Mode.MAX_AUTOTUNE, name: str = "graph", **kwargs: Any) -> None:
        super().__init__(gm, mode, name, **kwargs)
        self.serial = True
        self._streams: list[Any] | None = None
        self._events: dict[int, Any] = {}
        self._device: Any = None
        self._sources = {j for it in self.sched.items for j, _ in it.syncs}

    def run(self, args: Sequence[Any]) -> Any:
        import torch

        current = torch.cuda.current_stream()
        if self._streams is None:
            self._streams = [None] + [torch.cuda.Stream() for _ in self.sched.streams[1:]]
        self._streams[0] = current
        self._events = {}
        self._device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
        for side in self._streams[1:]:
            side.wait_stream(current)  # fork: the graph's inputs are ready
        self.serial = True
        try:
            return super().run(args)
        finally:
            for side in self._streams[1:]:
                current.wait_stream(side)  # join before the caller uses the outputs

    def _run_node(self, st: RunState, s: int, i: int) -> None:
        import torch

        assert self._streams is not None
        stream = self._streams[s]
        items = self.sched.items
        for j, _kind in items[i].syncs:
            event = self._events.get(j)
            if event is not None and items[j].stream != s:
                stream.wait_event(event)
        with torch.cuda.stream(stream):
            super()._run_node(st, s, i)
        if i in self._sources:
            event = torch.cuda.Event()
            event.record(stream)
            self._events[i] = event

    def _execute(self, st: RunState, i: int) -> Any:
        import torch

        if self.sched.items[i].role is Role.RECORD:
            return torch.empty(0, device=self._device)
        return super()._execute(st, i)
