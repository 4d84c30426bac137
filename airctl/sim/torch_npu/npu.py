"""``torch_npu.npu`` / ``torch.npu`` under sim: device, streams, events, NPU graphs.

Work runs on the CPU, synchronously, in the order the program issues it. Streams and events
are still real objects with identities: TorchAir's aclgraph code creates them, switches
between them and records/waits on them, and airctl's executor and profiler observe those
calls through the observers of :data:`airctl.sim.registry.REGISTRY` ``.device`` (where the
stand-in device keeps its process state: ids, each thread's current stream, core limits).
``is_available()`` is True: under sim the NPU *is* this stand-in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import torch

from airctl.sim import npu_device
from airctl.sim.registry import REGISTRY

_device = REGISTRY.device
_notify = _device.notify


class Stream:
    """A stream handle. ``stream_id`` 0 is the default stream of the device."""

    def __init__(self, device=None, priority: int = 0, stream_id: int | None = None,
                 device_index: int | None = None, device_type: int | None = None, **_: Any) -> None:
        self.stream_id = next(_device.ids) if stream_id is None else int(stream_id)
        self.device_index = 0 if device_index is None else int(device_index)
        self.device_type = 20 if device_type is None else int(device_type)  # c10 PrivateUse1
        self.priority = priority

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    def wait_stream(self, other: Stream) -> None:
        _notify("wait_stream", stream=self, other=other)

    def wait_event(self, event: Event) -> None:
        event.wait(self)

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash(("npu-stream", self.stream_id))

    def __repr__(self) -> str:
        return f"<torch_npu.npu.Stream device=npu:{self.device_index} npu_stream={self.stream_id} (sim)>"


class ExternalStream(Stream):
    def __init__(self, stream_ptr: int = 0, device=None, **_: Any) -> None:
        super().__init__(stream_id=stream_ptr)


_DEFAULT = Stream(stream_id=0)  # constant: the device's default stream, never changed


class Event:
    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 **_: Any) -> None:
        self.event_id = next(_device.ids)
        self.recorded_on: Stream | None = None

    def record(self, stream: Stream | None = None) -> None:
        self.recorded_on = stream or current_stream()
        _notify("record", event=self, stream=self.recorded_on)

    def wait(self, stream: Stream | None = None) -> None:
        _notify("wait", event=self, stream=stream or current_stream())

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def elapsed_time(self, end_event: Event) -> float:
        return 0.0

    def __repr__(self) -> str:
        return f"<torch_npu.npu.Event {self.event_id} (sim)>"


class ExternalEvent(Event):
    def reset(self, stream: Stream | None = None) -> None:
        return None


def current_stream(device=None) -> Stream:
    return getattr(_device.local, "stream", _DEFAULT)


def default_stream(device=None) -> Stream:
    return _DEFAULT


def set_stream(stream: Stream) -> None:
    _device.local.stream = stream
    _notify("set_stream", stream=stream)


@contextlib.contextmanager
def stream(s: Stream | None) -> Iterator[None]:
    if s is None:
        yield
        return
    previous = current_stream()
    set_stream(s)
    try:
        yield
    finally:
        set_stream(previous)


class StreamContext(contextlib.AbstractContextManager):
    def __init__(self, s: Stream | None) -> None:
        self._cm = stream(s)

    def __enter__(self):
        return self._cm.__enter__()

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def synchronize(device=None) -> None:
    _notify("synchronize")


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def _zero(device: Any = None) -> int:
    return 0


def _none(*args: Any, **kwargs: Any) -> None:
    return None


# nothing to select, allocate, free or initialise on a device that is the CPU
current_device = memory_allocated = max_memory_allocated = _zero
set_device = empty_cache = init = _lazy_init = fake_record_stream = _none


def get_device_name(device=None) -> str:
    return "Ascend (airctl sim on CPU)"


def get_device_properties(device=None):
    return SimpleNamespace(name=get_device_name(), total_memory=0, cube_core_num=24, vector_core_num=48)


# torch.cuda.default_generators' counterpart: one generator per device, the PrivateUse1 device's own
# (sim.npu_device.DeviceGenerator). The numbers of npu tensors' random ops come from the CPU generator
# (their kernels run on the CPU); the device generator keeps the seed and the philox offset that
# TorchAir's graph RNG state reads and advances (the offsets GE's random ops are given on an NPU).
default_generators = (npu_device.default_generator(0),)


def manual_seed(seed: int) -> None:
    torch.manual_seed(seed)
    for gen in default_generators:  # a device generator starts again at offset 0 when seeded
        gen.manual_seed(seed)
        gen.set_offset(0)


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def is_initialized() -> bool:
    return True


def _get_deterministic_level() -> int:
    return _device.deterministic_level


def set_deterministic_level(level: int) -> None:
    """The NPU determinism level (0 off .. 3): kernels on the CPU are what they are, but TorchAir's
    Dynamo guard (``torch_npu.dynamo._deterministic_guard``) recompiles when it changes, as on an NPU."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in (0, 1, 2, 3):
        raise ValueError(f"deterministic level must be 0, 1, 2 or 3, got {level!r}")
    _device.deterministic_level = level


def get_stream_limit(s: Stream) -> dict:
    cube, vector = _device.stream_limits.get(s.stream_id, (24, 48))
    return {"cube_core_num": cube, "vector_core_num": vector}


def set_stream_limit(s: Stream, cube_num: int, vector_num: int) -> None:
    _device.stream_limits[s.stream_id] = (int(cube_num), int(vector_num))


def get_device_limit(device=None) -> dict:
    return {"cube_core_num": 24, "vector_core_num": 48}


# NPU graphs (aclgraph). Capture and replay are device features: the sim backend runs TorchAir's
# generated code eagerly instead (see airctl.backends.sim); capturing an empty graph, which
# TorchAir does to initialise a memory pool, is allowed.
class NPUGraph:
    def __init__(self) -> None:
        self.captured = False

    def capture_begin(self, pool=None, capture_error_mode: str = "global") -> None:
        self.captured = True

    def capture_end(self) -> None:
        return None

    def replay(self) -> None:
        raise RuntimeError("sim: NPU graph replay is not simulated; TorchAir's aclgraph code runs eagerly under sim")

    def reset(self) -> None:
        self.captured = False

    def pool(self):
        return (0, 0)


@contextlib.contextmanager
def graph(npu_graph: NPUGraph, pool=None, stream=None, capture_error_mode: str = "global") -> Iterator[None]:
    npu_graph.capture_begin(pool, capture_error_mode)
    try:
        yield
    finally:
        npu_graph.capture_end()


def graph_pool_handle():
    return (0, next(_device.ids))


matmul = _device.matmul  # the flags live with the stand-in device's state (airctl.sim.registry)
conv = _device.conv
config = _device.config


class _Utils:
    """``torch_npu.npu.utils``"""

    @staticmethod
    def get_cann_version(module: str = "CANN") -> str:
        return ""

    @staticmethod
    def _is_gte_cann_version(version: str, module: str = "CANN") -> bool:
        return False


utils = _Utils()
streams = SimpleNamespace(Stream=Stream, Event=Event, ExternalStream=ExternalStream,  # constant: a module there
                          ExternalEvent=ExternalEvent)


def __getattr__(name: str) -> Any:
    """The rest of the wheel's ``torch_npu.npu.__all__``: :mod:`.npu_probes`, or why sim leaves it out."""
    from airctl.sim.torch_npu import npu_probes

    if name in npu_probes.__all__:
        return getattr(npu_probes, name)
    raise npu_probes.left_out_error("torch_npu.npu", name)


def __dir__() -> list[str]:
    from airctl.sim.torch_npu import npu_probes

    return sorted(set(globals()) | set(npu_probes.__all__))
