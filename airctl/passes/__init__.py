"""Declarative pass plugins: YAML pass files turned into TorchAir's two custom-pass hooks.

>>> hooks = build_hooks(Path("passes/stream.yaml"))                       # doctest: +SKIP
>>> config.post_grad_custom_pre_pass = hooks.pre_pass                      # doctest: +SKIP

Layout: :mod:`.schema` (the format as data), :mod:`.spec` (YAML → :class:`PassFile`, with line
numbers), :mod:`.select` (selectors over live FX graphs), :mod:`.builtin` (one builder per kind),
:mod:`.plugin` (``kind: python``), :mod:`.compose` (one instrumented hook per stage),
:mod:`.eager_check` (did a pass change results?), :mod:`.textdiff` (rename-proof FX diffs) and
:mod:`.apply` (what ``airctl passes`` runs). The format is documented in docs/passes.md.
"""

from __future__ import annotations

from pathlib import Path

from airctl.passes.compose import PassHooks, build_hooks
from airctl.passes.spec import PassFile, PassSpec, Selector, load

__all__ = ["Path", "PassFile", "PassHooks", "PassSpec", "Selector", "build_hooks", "load"]
