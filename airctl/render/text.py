"""Graph text made safe for the files renderers write: SVG/XML, HTML, DOT.

Graph contents are untrusted: the one escaping function for SVG, XML and HTML is
:func:`airctl.escape.markup` (markup characters as entities, control characters as ``\\xNN``);
:func:`esc` is its name here, kept for the renderers.

>>> esc('a<b> & "c"\\x01')
'a&lt;b&gt; &amp; &quot;c&quot;\\\\x01'
"""

from __future__ import annotations

from airctl.escape import markup as esc
from airctl.escape import printable

LABEL_CHARS = 26
__all__ = ["clip", "esc", "printable"]


def clip(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
