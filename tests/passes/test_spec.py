"""Reading pass files: the format, and every bad input pointing at its line with a useful hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from airctl.errors import SpecError
from airctl.passes import load
from airctl.passes.spec import parse_text
from airctl.pipeline.pass_hooks import build_hooks
from tests.passes.conftest import FIXTURES, PASSES


def test_stream_yaml_parses_with_defaults_and_lines() -> None:
    spec = load(PASSES / "stream.yaml")
    scope, wait = spec.passes
    assert (scope.name, scope.kind, scope.stage, scope.fields["stream"], scope.fields["record"]) == (
        "mm-abs-on-stream1", "stream_scope", "pre", "stream_1", True)
    assert scope.selectors["from"].target == ["aten.mm.default"]
    assert scope.selectors["to"].target == ["aten.abs.default"]
    assert wait.on == ["mm-abs-on-stream1"]  # a bare `on:` key is a word here, not YAML 1.1's True
    assert wait.line == 13 and scope.line == 7


def test_torch_ops_prefix_and_nth_are_accepted() -> None:
    spec = parse_text("version: 1\npasses:\n  - name: r\n    kind: record\n"
                      "    after: {target: torch.ops.aten.mm.default, nth: 1}\n")
    sel = spec.passes[0].selectors["after"]
    assert sel.target == ["aten.mm.default"] and sel.index == 1


@pytest.mark.parametrize(("name", "where", "words"), [
    ("syntax_error", (7, 9), ["YAML syntax error"]),
    ("unknown_key", (7, 5), ["unknown key `strem`"]),
    ("wrong_type", (8, 15), ["`passes[0].priority` must be an integer", "'high'"]),
    ("unknown_record", (12, 9), ["unknown record `mm-abs`"]),
    ("missing_plugin", (6, 13), ["plugin file not found: no_such_file.py"]),
])
def test_bad_files_raise_spec_error_at_file_line_column(name: str, where: tuple[int, int], words: list[str]) -> None:
    path = FIXTURES / f"{name}.yaml"
    with pytest.raises(SpecError) as info:
        build_hooks(path)
    error = info.value
    assert (error.file, error.line, error.column) == (str(path), *where)
    for word in words:
        assert word in error.message
    assert error.exit_code == 2


def test_unknown_key_suggests_the_closest_key() -> None:
    with pytest.raises(SpecError) as info:
        load(FIXTURES / "unknown_key.yaml")
    assert info.value.hint.startswith("did you mean `stream`?")


def test_wait_on_unknown_record_suggests_the_closest_record() -> None:
    with pytest.raises(SpecError) as info:
        load(FIXTURES / "unknown_record.yaml")
    assert "did you mean `mm-abs-on-stream1`?" in info.value.hint


def test_wait_on_a_scope_without_record_says_to_add_it() -> None:
    text = ("version: 1\npasses:\n  - {name: s, kind: stream_scope, stream: a, select: {target: aten.mm.default}}\n"
            "  - {name: w, kind: wait, before: {target: aten.sub.Tensor}, on: s}\n")
    with pytest.raises(SpecError) as info:
        parse_text(text)
    assert "makes no record" in info.value.message and info.value.hint == "add `record: true` to it"


@pytest.mark.parametrize(("text", "words"), [
    ("passes: []\n", ["missing required key `version`"]),
    ("version: 2\npasses: []\n", ["must be one of 1"]),
    ("version: 1\npasses:\n  - {name: a, kind: stream_scop, stream: s}\n", ["unknown pass kind `stream_scop`"]),
    ("version: 1\npasses:\n  - {name: a, kind: stream_scope, stream: s}\n", ["needs range or select"]),
    ("version: 1\npasses:\n  - {name: a, kind: record, after: {}}\n", ["needs at least one of"]),
    ("version: 1\npasses:\n  - {name: a, kind: record, after: {name: '('}}\n", ["not a valid regular expression"]),
    ("version: 1\npasses:\n  - {name: a, kind: record, after: {target: x}}\n"
     "  - {name: a, kind: record, after: {target: y}}\n", ["duplicate pass name `a`"]),
    ("version: 1\npasses:\n  - name: a\n    name: b\n", ["duplicate key `name`"]),
    ("version: 1\npasses:\n  - {name: a, kind: python, plugin: nofunction}\n", ["path/to/file.py:function"]),
    ("- 1\n", ["a pass file is a mapping"]),
])
def test_invalid_documents(text: str, words: list[str]) -> None:
    with pytest.raises(SpecError) as info:
        build_hooks_from_text(text)
    for word in words:
        assert word in info.value.message
    assert info.value.line is not None


def build_hooks_from_text(text: str):
    spec = parse_text(text)
    from airctl.passes.builtin import build

    return [build(p) for p in spec.passes]


def test_kind_typo_suggests_the_kind() -> None:
    with pytest.raises(SpecError) as info:
        parse_text("version: 1\npasses:\n  - {name: a, kind: stream_scop, stream: s}\n")
    assert info.value.hint.startswith("did you mean `stream_scope`?")


def test_post_stage_selector_naming_view_is_a_warning() -> None:
    spec = load(FIXTURES / "post_view.yaml")
    (warning,) = spec.warnings
    assert "aten.reshape.default" in warning.message and warning.line == 7


def test_plugin_function_missing_suggests_names() -> None:
    text = "version: 1\npasses:\n  - {name: a, kind: python, plugin: 'plugins.py:add_to_subb'}\n"
    path = FIXTURES / "tmp_missing_function.yaml"
    path.write_text(text)
    try:
        with pytest.raises(SpecError) as info:
            build_hooks(path)
    finally:
        path.unlink()
    assert "has no function `add_to_subb`" in info.value.message
    assert "add_to_sub" in info.value.hint


def test_shipped_pass_files_all_load(torch_air) -> None:
    for path in sorted(PASSES.glob("*.yaml")):
        hooks = build_hooks(path)
        assert hooks.pre_pass is not None or hooks.post_pass is not None, path


@pytest.mark.slow
def test_deeply_nested_yaml_is_a_spec_error_not_a_recursion_error(tmp_path: Path) -> None:
    from airctl.errors import SpecError
    from airctl.passes.spec import load

    for name, text in {"flow": "x: " + "[" * 100_000, "block": "a:\n" + "".join(
            " " * (i + 1) + "b:\n" for i in range(1500))}.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        with pytest.raises(SpecError, match="nests too deep") as e:
            load(path)
        assert e.value.file == str(path) and e.value.line == 1


def test_timeouts_default_per_file_and_per_pass() -> None:
    head = "version: 1\n{top}passes:\n  - name: a\n    kind: record\n    after: {{target: aten.mm.default}}\n{own}"
    assert parse_text(head.format(top="", own="")).passes[0].timeout == 600  # generous by default
    assert parse_text(head.format(top="timeout: 30\n", own="")).passes[0].timeout == 30
    assert parse_text(head.format(top="timeout: 30\n", own="    timeout: 2.5\n")).passes[0].timeout == 2.5
    assert parse_text(head.format(top="", own="    timeout: 0\n")).passes[0].timeout is None  # no limit
    for bad, words in (("-1", "must be >= 0"), (".nan", "finite"), ("soon", "must be a number")):
        with pytest.raises(SpecError) as info:
            parse_text(head.format(top="", own=f"    timeout: {bad}\n"))
        assert words in info.value.message and info.value.line == 6, (bad, info.value.message)
