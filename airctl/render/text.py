"""Graph text made safe for the files renderers write: SVG/XML, HTML, DOT.

Graph contents are untrusted: a node name may hold ``<script>``, quotes, ``&`` or control
characters. Markup characters are escaped (:func:`esc`); control characters, which XML 1.0 does not
allow even as character references (an SVG holding one does not open), are shown as ``\\xNN``
(:func:`printable`), and so are lone surrogates.

>>> esc('a<b> & "c"\\x01')
'a&lt;b&gt; &amp; &quot;c&quot;\\\\x01'
"""

from __future__ import annotations

import html
import re

LABEL_CHARS = 26
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_SPECIAL = re.compile("[&<>\"'\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")  # what esc changes


def printable(text: object) -> str:
    """``text`` with characters XML cannot carry written as ``\\xNN`` / ``\\uNNNN``."""
    s = str(text)
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                            else f"\\u{ord(m.group()):04x}", s)


def esc(text: object) -> str:
    """Text for SVG/HTML content and attribute values."""
    s = str(text)
    if _SPECIAL.search(s) is None:  # most names: nothing to do (a 50k-node picture escapes 150k strings)
        return s
    return html.escape(printable(s), quote=True)


def clip(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
