"""Text taken from input data, made safe for each medium it is written to: one function per medium.

Names in graphs, profiles, file names and paths are untrusted: a stream may be called
``"\\x1b]0;owned\\x07"`` (an OSC sequence that retitles the terminal), an op ``"a\\x07b"`` (BEL,
which XML 1.0 does not allow at all: an SVG holding one does not open), a file
``"[red]x[/red].pbtxt"`` or ``":thumbs_up:.txt"`` (rich would render the markup or the emoji, and
the error would name a file that does not exist). Every string from data goes through:

- :func:`terminal` before rich prints it (stdout or stderr): control characters as ``\\xNN``, rich
  markup escaped (the consoles have emoji codes off, :mod:`airctl.cli.output`);
- :func:`markup` into SVG, XML or HTML (content and attribute values alike): ``& < > " '`` as
  entities, characters XML cannot carry as ``\\xNN`` / ``\\uNNNN`` (:func:`printable`).

It sits on the floor (no airctl imports), so every layer, renderers and profile alike, uses the same one.

>>> terminal("\\x1b]0;t\\x07[red]x")
'\\\\x1b]0;t\\\\x07\\\\[red]x'
>>> markup('a<b> & "c"\\x01')
'a&lt;b&gt; &amp; &quot;c&quot;\\\\x01'
"""

from __future__ import annotations

import html
import re
from typing import Any

from rich.markup import escape as _rich_escape

_TERMINAL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 (but tab and newline), DEL, C1
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_SPECIAL = re.compile("[&<>\"'\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")  # what markup changes


def terminal(text: Any) -> str:
    """``text`` safe to print with rich: control characters shown as ``\\xNN``, markup escaped."""
    return _rich_escape(controls(text))


def controls(text: Any) -> str:
    """``text`` for a terminal, printed as it is (no rich): control characters as ``\\xNN``, tab and
    newline kept. ``airctl dump`` prints a file TorchAir wrote this way when stdout is a terminal, and
    a graph listing is written so."""
    return _TERMINAL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def one_line(text: Any) -> str:
    """:func:`terminal` for a name or a path shown inside a line: newline and tab as ``\\n``/``\\t``
    too (a file named ``a\\nb.py`` must not split a header or an error into two lines)."""
    return terminal(str(text).replace("\n", "\\n").replace("\t", "\\t"))


def printable(text: Any) -> str:
    """``text`` with the characters XML cannot carry (and C1 controls) written as ``\\xNN`` / ``\\uNNNN``."""
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                            else f"\\u{ord(m.group()):04x}", str(text))


def markup(text: Any) -> str:
    """``text`` for SVG, XML and HTML, as element content or a quoted attribute value."""
    s = str(text)
    if _SPECIAL.search(s) is None:  # most names: nothing to do (a 50k-node picture escapes 150k strings)
        return s
    return html.escape(printable(s), quote=True)
