"""airctl/pipeline/compile/converter_errors.py: the unconvertible-ops error names the module holding
each op, and its hint has no dangling "Otherwise:" when no known workaround precedes it."""

from __future__ import annotations


def test_a_converter_hint_without_a_known_workaround_starts_with_no_dangling_otherwise() -> None:
    from airctl.pipeline.compile.converter_errors import unconvertible_error
    from airctl.verify.converter_coverage import Unconvertible

    error = unconvertible_error([Unconvertible("aten.foo.default", "no converter", "none", ["foo"], "/w/m.py:3",
                                               None, "encoder.pos_conv_embed.conv")])
    assert error.hint.startswith("Rewrite these ops") and "Otherwise" not in error.hint
    assert "in module encoder.pos_conv_embed.conv" in error.message
