"""``name:`` selectors' regular expressions, matched in time linear in the name's length.

Python's ``re`` backtracks: ``(a+)+$`` against a long node name never finishes, and its C loop
holds the interpreter, so Ctrl-C waits with it. A pass file is input anyone may write, so names
are matched here instead, the way RE2 and Thompson's construction do it: the pattern is parsed by
Python's own parser (``re._parser``: the syntax users know, with its error messages), built into a
nondeterministic automaton of at most :data:`~airctl.limits.NAME_PATTERN_STATES` states, and run
over the name one character at a time, carrying the set of states alive. Each step costs at most
the automaton's size, whatever the pattern; the sets met are cached as deterministic states
(bounded), so matching thousands of node names costs one dictionary lookup per character. It is
plain Python: an interrupt reaches it between any two characters.

What needs backtracking is refused when the pass file is read: backreferences (``\\1``),
lookahead and lookbehind, conditional groups, possessive repeats and atomic groups. Flags ``i``
and ``s`` (inline or in a group) are honoured; ``m`` and ``x`` are read by the parser.

>>> compile_pattern(r"(a+)+$").fullmatch("a" * 5000 + "b")
False
>>> compile_pattern(r"mm(_\\d+)?").fullmatch("mm_12")
True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from airctl.limits import NAME_PATTERN_CHARS, NAME_PATTERN_STATES

try:
    from re import _constants as C  # noqa: N812 - sre's opcode table
    from re import _parser as sre_parse
except ImportError:  # Python 3.10
    import sre_constants as C  # type: ignore[no-redef]  # noqa: N812
    import sre_parse  # type: ignore[no-redef]

CACHE_STATES = 4096  # deterministic states kept per pattern before the cache starts over


class PatternError(ValueError):
    """The pattern is not a regular expression airctl can match in linear time (the message says why)."""


Pred = Callable[[str], bool]


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


_CATEGORIES: dict[Any, Pred] = {
    C.CATEGORY_DIGIT: str.isdecimal, C.CATEGORY_NOT_DIGIT: lambda c: not c.isdecimal(),
    C.CATEGORY_SPACE: str.isspace, C.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
    C.CATEGORY_WORD: _word, C.CATEGORY_NOT_WORD: lambda c: not _word(c),
}
_REFUSED = {"GROUPREF": "a backreference", "GROUPREF_EXISTS": "a conditional group", "ASSERT": "a lookahead/lookbehind",
            "ASSERT_NOT": "a negative lookahead/lookbehind", "POSSESSIVE_REPEAT": "a possessive repeat",
            "ATOMIC_GROUP": "an atomic group"}
_BEGIN = {C.AT_BEGINNING, C.AT_BEGINNING_STRING, getattr(C, "AT_BEGINNING_LINE", None)}
_END = {C.AT_END, C.AT_END_STRING, getattr(C, "AT_END_LINE", None)}
_BOUNDARY = {C.AT_BOUNDARY, getattr(C, "AT_UNI_BOUNDARY", None)}
_NON_BOUNDARY = {C.AT_NON_BOUNDARY, getattr(C, "AT_UNI_NON_BOUNDARY", None)}
_KNOWN_AT = (_BEGIN | _END | _BOUNDARY | _NON_BOUNDARY) - {None}


class _Builder:
    """Thompson's construction: ``chars[i]`` a predicate (a state that reads one character) or None;
    ``eps[i]`` the states reached without reading; ``asserts[i]`` a position test on those edges."""

    def __init__(self) -> None:
        self.chars: list[Pred | None] = []
        self.next: list[list[int]] = []
        self.asserts: list[Any] = []

    def state(self, pred: Pred | None = None, at: Any = None) -> int:
        if len(self.chars) >= NAME_PATTERN_STATES:
            raise PatternError(f"expands past {NAME_PATTERN_STATES:,} states (repeats of repeats); write it shorter")
        self.chars.append(pred)
        self.next.append([])
        self.asserts.append(at)
        return len(self.chars) - 1

    def build(self, items: Any, flags: int) -> tuple[int, int]:
        """States (start, end) of a sequence of parsed items; ``end`` reads nothing, links onward."""
        start = end = self.state()
        for op, arg in items:
            s, e = self.item(op, arg, flags)
            self.next[end].append(s)
            end = e
        return start, end

    def item(self, op: Any, arg: Any, flags: int) -> tuple[int, int]:
        name = str(op)
        if name in _REFUSED:
            raise PatternError(f"{_REFUSED[name]} needs backtracking, which airctl does not do on names")
        if op is C.SUBPATTERN:
            _group, add, remove, items = arg
            return self.build(items, (flags | add) & ~remove)
        if op is C.BRANCH:
            start, end = self.state(), self.state()
            for alt in arg[1]:
                s, e = self.build(alt, flags)
                self.next[start].append(s)
                self.next[e].append(end)
            return start, end
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            return self.repeat(*arg, flags)
        if op is C.AT:
            if arg not in _KNOWN_AT:
                raise PatternError(f"`{arg}` is not supported in a name pattern")
            s = self.state(at=arg)
            return s, s
        s = self.state(pred=_predicate(op, arg, flags))
        e = self.state()
        self.next[s].append(e)
        return s, e

    def repeat(self, low: int, high: int, items: Any, flags: int) -> tuple[int, int]:
        start = end = self.state()
        for _ in range(low):
            s, e = self.build(items, flags)
            self.next[end].append(s)
            end = e
        if high == C.MAXREPEAT:
            s, e = self.build(items, flags)
            self.next[end].append(s)
            self.next[e].append(s)
            self.next[e].append(after := self.state())
            self.next[end].append(after)
            return start, after
        last = self.state()
        for _ in range(high - low):
            s, e = self.build(items, flags)
            self.next[end].append(s)
            self.next[end].append(last)
            end = e
        self.next[end].append(last)
        return start, last


def _predicate(op: Any, arg: Any, flags: int) -> Pred:
    base = _base_predicate(op, arg, flags)
    if flags & re.IGNORECASE:
        return lambda c: base(c) or base(c.lower()) or base(c.upper())
    return base


def _base_predicate(op: Any, arg: Any, flags: int) -> Pred:
    if op is C.LITERAL:
        ch = chr(arg)
        return lambda c: c == ch
    if op is C.NOT_LITERAL:
        ch = chr(arg)
        return lambda c: c != ch
    if op is C.ANY:
        return (lambda c: True) if flags & re.DOTALL else (lambda c: c != "\n")
    if op is C.CATEGORY:
        return _CATEGORIES[arg]
    if op is C.IN:
        negate = bool(arg) and arg[0][0] is C.NEGATE
        parts = [_set_member(o, a) for o, a in (arg[1:] if negate else arg)]
        if negate:
            return lambda c: not any(p(c) for p in parts)
        return lambda c: any(p(c) for p in parts)
    raise PatternError(f"`{op}` is not supported in a name pattern")


def _set_member(op: Any, arg: Any) -> Pred:
    if op is C.RANGE or str(op).startswith("RANGE"):
        lo, hi = chr(arg[0]), chr(arg[1])
        return lambda c: lo <= c <= hi
    if op is C.LITERAL or str(op).startswith("LITERAL"):
        ch = chr(arg)
        return lambda c: c == ch
    if op is C.CATEGORY:
        return _CATEGORIES[arg]
    raise PatternError(f"`{op}` is not supported in a character class of a name pattern")


class NamePattern:
    """A compiled name pattern: :meth:`fullmatch` says whether the whole name matches it."""

    def __init__(self, pattern: str) -> None:
        if len(pattern) > NAME_PATTERN_CHARS:
            raise PatternError(f"longer than {NAME_PATTERN_CHARS} characters")
        try:
            parsed = sre_parse.parse(pattern)
        except re.error as e:
            raise PatternError(str(e)) from None
        except RecursionError:
            raise PatternError("nested too deep") from None
        self.pattern = pattern
        b = _Builder()
        try:
            start, end = b.build(list(parsed), parsed.state.flags)
        except RecursionError:
            raise PatternError("nested too deep") from None
        self._chars, self._next, self._asserts, self._accept = b.chars, b.next, b.asserts, end
        self._start = start
        self._steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _closure(self, states: list[int], text: str, pos: int) -> frozenset[int]:
        """Every state reachable from ``states`` without reading, position tests checked at ``pos``."""
        seen: set[int] = set()
        stack = list(states)
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            at = self._asserts[s]
            if at is not None and not _holds(at, text, pos):
                continue
            seen.add(s)
            if self._chars[s] is None:
                stack.extend(self._next[s])
        return frozenset(seen)

    def fullmatch(self, text: str) -> bool:
        """Whether all of ``text`` matches (``re.fullmatch`` semantics), in time linear in its length."""
        current = self._closure([self._start], text, 0)
        has_asserts = any(a is not None for a in self._asserts)
        for pos, c in enumerate(text):
            if not current:
                return False
            key = (current, c)
            nxt = None if has_asserts else self._steps.get(key)
            if nxt is None:
                moved = [t for s in current if (p := self._chars[s]) is not None and p(c) for t in self._next[s]]
                nxt = self._closure(moved, text, pos + 1)
                if not has_asserts:
                    if len(self._steps) >= CACHE_STATES:
                        self._steps.clear()
                    self._steps[key] = nxt
            current = nxt
        return self._accept in current


def _holds(at: Any, text: str, pos: int) -> bool:
    if at in _BEGIN:
        return pos == 0
    if at in _END:
        return pos == len(text)
    before = pos > 0 and _word(text[pos - 1])
    after = pos < len(text) and _word(text[pos])
    return (before != after) if at in _BOUNDARY else (before == after)


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> NamePattern:
    """The compiled ``pattern`` (cached); :class:`PatternError` when it cannot be matched linearly."""
    return NamePattern(pattern)
