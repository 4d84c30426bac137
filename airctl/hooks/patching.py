"""Set attributes and ``sys.modules`` entries for the length of a ``with`` block, then put them back.

Every patch airctl applies to TorchAir, torch_npu or torch is one of these: whatever a run
changes, the process looks the same afterwards (an attribute that did not exist is deleted
again, one that did gets its old value back), in reverse order of patching.

>>> import types
>>> box = types.SimpleNamespace(x=1)
>>> with Patches() as p:
...     _ = p.setattr(box, "x", 2), p.setattr(box, "y", 3)
...     (box.x, box.y)
(2, 3)
>>> box.x, hasattr(box, "y")
(1, False)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, MutableMapping
from types import ModuleType
from typing import Any

_MISSING = object()


class Patches:
    """A stack of undo steps; ``with Patches() as p`` undoes them all on exit, errors included."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def setattr(self, owner: Any, name: str, value: Any) -> Any:
        """Set ``owner.name = value``; return the previous value (``None`` if there was none)."""
        # a class's own __dict__, so an inherited attribute is restored by deletion, not shadowed
        old = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name, _MISSING)

        def undo() -> None:
            if old is not _MISSING:
                setattr(owner, name, old)
            elif name in getattr(owner, "__dict__", {}) or not isinstance(owner, type):
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass

        self._undo.append(undo)
        setattr(owner, name, value)
        return None if old is _MISSING else old

    def setitem(self, mapping: MutableMapping[Any, Any], key: Any, value: Any = _MISSING) -> None:
        """Set ``mapping[key] = value`` (or remove the key when no value is given), restored on exit."""
        old = mapping.get(key, _MISSING)

        def undo() -> None:
            if old is _MISSING:
                mapping.pop(key, None)
            else:
                mapping[key] = old

        self._undo.append(undo)
        if value is _MISSING:
            mapping.pop(key, None)
        else:
            mapping[key] = value

    def defer(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` on exit, after the undo steps added later than it (last in, first out)."""
        self._undo.append(fn)

    def module(self, name: str, module: ModuleType) -> None:
        """Put ``module`` in ``sys.modules[name]`` (restored or removed on exit)."""
        self.setitem(sys.modules, name, module)

    def restore(self) -> None:
        """Every undo step, last first; one that raises (a Ctrl-C landing in it) does not keep the
        others from running: the first exception is raised once all have run."""
        raised: BaseException | None = None
        while self._undo:
            step = self._undo.pop()
            try:
                step()
            except BaseException as error:  # noqa: BLE001 - raised below, once the process looks as before
                raised = raised or error
        if raised is not None:
            raise raised

    def __enter__(self) -> Patches:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()
