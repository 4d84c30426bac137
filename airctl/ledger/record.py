"""The base of the typed run index: JSON keys as dataclass fields, checked on read, unknown keys kept.

``index.json`` is a contract read by other tools and by older and newer airctl versions, so a
read-then-write must not change it: a :class:`Record` remembers which keys it was read with (or
which were set since), in order, and writes exactly those; keys it does not know stay in ``extra``.

- *core* fields are written whenever the writer creates the record (``null`` if unset);
- *optional* fields (``optional()``) are written only once set, as airctl always did;
- on read, the record's keys are exactly the file's;
- set by key (:meth:`Record.update`, what :class:`~airctl.ledger.writer.LedgerWriter` calls), a
  key that is not a field is a ``TypeError``: a misspelt key is never written silently.

Reading checks every known key's type against the field's annotation (and, inside the nested
objects of :mod:`airctl.ledger.index_parts`, each known key's) and raises
:class:`~airctl.errors.LedgerError` naming ``index.json`` and where in it (graph, stage, key).
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from airctl.errors import LedgerError
from airctl.ledger_files import INDEX  # noqa: F401 - re-exported: ledger readers and writers name it here

R = TypeVar("R", bound="Record")


def required() -> Any:
    """A field a record read from JSON must have (the reader needs it to find anything)."""
    return dataclasses.field(metadata={"required": True})


def optional(default: Any = None) -> Any:
    """A field written only once it is set (``dataclasses.field`` with a marker)."""
    return dataclasses.field(default=default, metadata={"optional": True})


@dataclasses.dataclass(kw_only=True)
class Record:
    """A dataclass base: JSON round trip, presence of keys, unknown keys in ``extra``."""

    KIND: ClassVar[str] = "entry"  # how errors name this record: "graph", "stage", ...
    # (key, type, text): errors name a record of a list whose key has that type by the text, formatted with
    # its keys and ``position`` (a key it lacks reads as its position); any other record by UNNAMED
    NAMED: ClassVar[tuple[str, type, str] | None] = None
    UNNAMED: ClassVar[str] = "{kind} {position}"
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def label(cls, data: Any, position: int) -> str:
        """How errors name the ``position``-th record of a list, read as ``data``."""
        if cls.NAMED is not None and isinstance(data, dict):
            key, kind, text = cls.NAMED
            if isinstance(data.get(key), kind):
                return text.format_map(_OrPosition({**data, "position": position}))
        return cls.UNNAMED.format(kind=cls.KIND, position=position)

    # -- presence and order of keys -------------------------------------------------------------
    def __post_init__(self) -> None:
        keys = [f.name for f in _fields(type(self))
                if not f.metadata.get("optional") or getattr(self, f.name) is not None]
        object.__setattr__(self, "_keys", dict.fromkeys([*keys, *self.extra]))

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        keys = self.__dict__.get("_keys")
        if keys is not None and name in _field_names(type(self)):
            keys.setdefault(name)

    def has(self, key: str) -> bool:
        """Is ``key`` in this record's JSON (a known field that is set, or an extra key)?"""
        if key in _field_names(type(self)):
            return key in self.__dict__.get("_keys", ())
        return key in self.extra

    # -- dict-style keys (the JSON names) ------------------------------------------------------
    def keys(self) -> list[str]:
        """The JSON keys, in the order they were read or first set (as a dict keeps them)."""
        ordered = [k for k in self._keys if self.has(k)]
        return ordered + [k for k in self.extra if k not in self._keys]

    def value(self, key: str, default: Any = None) -> Any:
        """The value of JSON key ``key`` (a field or an extra key), ``default`` when absent."""
        if key in _field_names(type(self)):
            return getattr(self, key) if self.has(key) else default
        return self.extra.get(key, default)

    def update(self, fields: Mapping[str, Any], caller: str = "update()") -> None:
        """Set the fields named by their JSON keys (nested entries given as JSON are read). A key that
        is not a field is refused before anything is set, a ``TypeError`` naming ``caller``, as Python
        refuses a misspelt keyword: writing it would keep a key no reader looks at."""
        names = _field_names(type(self))
        unknown = [key for key in fields if key not in names]
        if unknown:
            close = difflib.get_close_matches(unknown[0], sorted(names), n=1)
            raise TypeError(f"{caller} got an unknown {self.KIND} key {unknown[0]!r}"
                            + (f" (did you mean {close[0]!r}?)" if close else "")
                            + f"; the keys are the fields of {type(self).__name__} (airctl/ledger/index.py)")
        hints = _hints(type(self))
        for key, value in fields.items():
            setattr(self, key, _coerce(value, hints[key]))

    # -- JSON ----------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in self.keys():
            out[key] = _dump(self.value(key))
        return out

    @classmethod
    def from_json(cls: type[R], data: Any, *, file: str | None = None, where: str = "") -> R:
        """Read and type-check one record; errors name ``index.json`` and ``where``."""
        if not isinstance(data, dict):
            raise _error(f"{where or cls.KIND} is {_kind(data)}, expected an object", file)
        hints = _hints(cls)
        names = _field_names(cls)
        missing = [f.name for f in _fields(cls) if f.metadata.get("required") and f.name not in data]
        if missing:
            raise _error(f"{where or cls.KIND} has no {missing[0]!r}", file)
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key in names:
                known[key] = _check(value, hints[key], where, repr(key), file)
            else:
                extra[key] = value
        record = cls(**known, extra=extra)  # type: ignore[call-arg]
        object.__setattr__(record, "_keys", dict.fromkeys(data))
        return record


# -- helpers ----------------------------------------------------------------------------------
@functools.cache
def _fields(cls: type) -> tuple[dataclasses.Field, ...]:
    return tuple(f for f in dataclasses.fields(cls) if f.name != "extra")


@functools.cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in _fields(cls))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


class _OrPosition(dict):
    """A record's keys for :attr:`Record.NAMED`: one it lacks reads as its position in the list."""

    def __missing__(self, key: str) -> Any:
        return self["position"]


def _error(message: str, file: str | None) -> LedgerError:
    return LedgerError(f"malformed {INDEX}: {message}", file=file,
                       hint="the ledger was edited or written by another tool; rerun the command to get a new one")


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
             dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


_EXPECTED = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", dict: "an object",
             list: "a list"}


def _check(value: Any, hint: Any, parent: str, key: str, file: str | None) -> Any:
    """``value`` (at ``key`` of the record ``parent``) checked against ``hint``; nested records are
    read. Raises LedgerError."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if value is None and len(args) < len(typing.get_args(hint)):
            return None
        return _check(value, args[0], parent, key, file)
    if isinstance(hint, type) and issubclass(hint, Record):
        return hint.from_json(value, file=file, where=f"{parent}: {key}" if parent else key)
    if typing.is_typeddict(hint):  # a nested object (index_parts.py): a dict whose known keys are checked
        _check(value, dict, parent, key, file)
        for name, item in _hints(hint).items():
            if name in value:
                _check(value[name], item, parent, _inner(key, name), file)
        return value
    base = origin or hint
    if base is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        ok = isinstance(value, base) and not (base is int and isinstance(value, bool))
    if not ok:
        where = f"{parent}: {key}" if parent else key
        raise _error(f"{where} is {_kind(value)}, expected {_EXPECTED.get(base, base.__name__)}", file)
    if base is dict and typing.get_args(hint):  # dict[str, X]: every value an X (``timings``, ``by_kind``)
        for name, item in value.items():
            _check(item, typing.get_args(hint)[1], parent, _inner(key, name), file)
        return value
    if base is list and typing.get_args(hint):
        (item,) = typing.get_args(hint)
        if isinstance(item, type) and issubclass(item, Record):
            return [item.from_json(v, file=file, where=", ".join(filter(None, [parent, item.label(v, i)])))
                    for i, v in enumerate(value)]
        return [_check(v, item, parent, f"{key}[{i}]", file) for i, v in enumerate(value)]
    return value


def _inner(key: str, name: str) -> str:
    """How errors name key ``name`` inside ``key``: ``'execution.matches_eager'``."""
    return f"{key[:-1]}.{name}'" if key.endswith("'") else f"{key}.{name}"


def _coerce(value: Any, hint: Any) -> Any:
    """A value set by key: nested entries given as JSON objects become records, a str enum (a
    :class:`~airctl.modes.Mode`) its value, as JSON holds it (unchecked otherwise)."""
    if isinstance(value, enum.Enum) and isinstance(value, str):
        return value.value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return None if value is None else _coerce(value, args[0])
    if isinstance(hint, type) and issubclass(hint, Record) and isinstance(value, Mapping):
        return hint.from_json(dict(value))
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(hint) or (Any,)
        if isinstance(item, type) and issubclass(item, Record):
            return [_coerce(v, item) for v in value]
    return value  # shared, as the dict index shared it: later changes to it are written too


def _dump(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value
