"""Declarative pass plugins: the YAML pass language and what it selects and builds.

>>> from airctl.pipeline.pass_hooks import build_hooks                    # doctest: +SKIP
>>> hooks = build_hooks(Path("passes/stream.yaml"))                       # doctest: +SKIP
>>> config.post_grad_custom_pre_pass = hooks.pre_pass                      # doctest: +SKIP

Layout: :mod:`.schema` (the format as data), :mod:`.spec` (YAML → :class:`PassFile`, with line
numbers), :mod:`.select` (selectors over live FX graphs), :mod:`.builtin` (one builder per kind),
:mod:`.plugin` (``kind: python``), :mod:`.fix` (the waits that close races), :mod:`.textdiff`
(rename-proof FX diffs). This package sits below the verifier, which writes its race hints with
:mod:`.fix`; running passes under the instruments (one hook per stage) is
:mod:`airctl.pipeline.pass_hooks`. The format is documented in docs/passes.md.
"""

from __future__ import annotations

from pathlib import Path

from airctl.passes.spec import PassFile, PassSpec, Selector, load

__all__ = ["Path", "PassFile", "PassSpec", "Selector", "load"]
