"""A TIMES table's rows by name, in flat arrays: a 64 MB table without a Python object per row.

A CSV near the size limit holds millions of rows; a ``dict`` of :class:`~airctl.predict.times.Row`
objects took about 300 bytes a row (the name, the row, its two floats and line, the dict's slot),
over a gigabyte for short names. :class:`RowStore` keeps the names' UTF-8 bytes in one buffer, the
numbers in ``array`` columns and an open-addressing hash index over them (about 60 bytes a row).
It is a read-only :class:`~collections.abc.Mapping` of name to ``Row`` (rows are made on access),
filled by :meth:`RowStore.add`, which refuses a name already present by returning its row.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Mapping
from typing import Any

_EMPTY = -1


class RowStore(Mapping[str, Any]):
    """Rows by name; ``row_type(us, cores, line)`` builds what ``store[name]`` returns."""

    def __init__(self, row_type: Any) -> None:
        self._row = row_type
        self._blob = bytearray()
        self._ends = array("q")
        self._hashes = array("q")
        self._us = array("d")
        self._cores = array("d")  # NaN: no cores given
        self._lines = array("q")
        self._slots = array("q", [_EMPTY]) * 16

    def __len__(self) -> int:
        return len(self._us)

    def __iter__(self) -> Iterator[str]:
        start = 0
        for end in self._ends:
            yield self._blob[start:end].decode("utf-8")
            start = end

    def __getitem__(self, name: str) -> Any:
        i = self._find(name.encode("utf-8"))[1]
        if i == _EMPTY:
            raise KeyError(name)
        return self._make(i)

    def add(self, name: str, us: float, cores: float | None, line: int) -> Any:
        """Adds the row; when ``name`` is already there, adds nothing and returns that row."""
        key = name.encode("utf-8")
        slot, i = self._find(key)
        if i != _EMPTY:
            return self._make(i)
        self._blob += key
        self._ends.append(len(self._blob))
        self._hashes.append(hash(key))
        self._us.append(us)
        self._cores.append(math.nan if cores is None else cores)
        self._lines.append(line)
        self._slots[slot] = len(self._us) - 1
        if 2 * len(self._us) > len(self._slots):
            self._grow()
        return None

    def _make(self, i: int) -> Any:
        cores = self._cores[i]
        return self._row(self._us[i], None if math.isnan(cores) else cores, self._lines[i])

    def _key(self, i: int) -> bytes:
        return bytes(self._blob[self._ends[i - 1] if i else 0:self._ends[i]])

    def _find(self, key: bytes) -> tuple[int, int]:
        """(slot, row) for ``key``: its row, or the free slot where it would go and -1."""
        mask = len(self._slots) - 1
        h = hash(key)
        j = h & mask
        while True:
            i = self._slots[j]
            if i == _EMPTY or (self._hashes[i] == h and self._key(i) == key):
                return j, i
            j = (j + 1) & mask

    def _grow(self) -> None:
        size = len(self._slots) * 2
        self._slots = array("q", [_EMPTY]) * size
        mask = size - 1
        for i, h in enumerate(self._hashes):
            j = h & mask
            while self._slots[j] != _EMPTY:
                j = (j + 1) & mask
            self._slots[j] = i
