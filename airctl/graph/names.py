"""Fresh names for what airctl adds to a graph or a pass file, in the style of the place they go.

GE names a second op of a name ``name_1`` (airctl's GE build adds its Send/Recv ops that way); a
YAML pass file reads better with ``name-2`` (``passes fix`` names its waits so). One rule, two styles.

>>> taken = {"mm", "mm_1"}
>>> free_name("mm", taken), free_name("wait", taken, sep="-", first=2), free_name("wait", taken, sep="-", first=2)
('mm_2', 'wait', 'wait-2')
"""

from __future__ import annotations


def free_name(name: str, taken: set[str], *, sep: str = "_", first: int = 1) -> str:
    """``name``, else ``name{sep}{first}``, ``name{sep}{first + 1}``, … : the first not in ``taken``,
    which is then added to ``taken``."""
    candidate, k = name, first
    while candidate in taken:
        candidate, k = f"{name}{sep}{k}", k + 1
    taken.add(candidate)
    return candidate
