"""Dict-style access to the typed run index, for callers not yet moved to the typed API.

``LedgerWriter.index`` (and so ``CompileResult.index``/``RunResult.index``) used to be the
``index.json`` dict itself, read and written by key. :class:`RecordView` keeps that working on
top of :class:`~airctl.ledger.index.RunIndex`: reads give the JSON values (entries as views, so
``index["graphs"][0]["stages"]`` works), writes go through to the record (``index["error"] = ...``,
``entry["source"] = ...``, ``index["timings"]["x"] = ...``). Transitional: new code uses the
index's attributes and the writer's methods; docs/ledger.md lists what replaces each key write.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

from airctl.ledger.record import Record


class RecordView(MutableMapping[str, Any]):
    """A record as a write-through mapping of its JSON keys."""

    def __init__(self, record: Record) -> None:
        self.record = record

    def __getitem__(self, key: str) -> Any:
        if not self.record.has(key):
            raise KeyError(key)
        return view_of(self.record.value(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self.record.set_key(key, plain(value))

    def __delitem__(self, key: str) -> None:
        if key not in self.record.extra:
            raise KeyError(f"{key!r}: only keys airctl does not know can be deleted from the index")
        del self.record.extra[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.record.keys())

    def __len__(self) -> int:
        return len(self.record.keys())

    def __repr__(self) -> str:
        return repr(self.record.to_json())

    def to_json(self) -> dict[str, Any]:
        return self.record.to_json()


def view_of(value: Any) -> Any:
    """Records as views, lists of records as lists of views; anything else as is (shared)."""
    if isinstance(value, Record):
        return RecordView(value)
    if isinstance(value, list) and value and isinstance(value[0], Record):
        return [view_of(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """Views given back (``index["graphs"] = index["graphs"]``) as their records."""
    if isinstance(value, RecordView):
        return value.record
    if isinstance(value, list) and any(isinstance(v, RecordView) for v in value):
        return [plain(v) for v in value]
    return value
