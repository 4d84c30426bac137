"""Choice options (--mode, --backend, --type, --dump-type): listed in --help, completed by shells, and a
value outside them is click's usage error (exit 2) naming the choices, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.cli.options import complete_dump_types

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "fixtures" / "models" / "seed.py"
YAML = REPO / "passes" / "stream.yaml"
GRAPH = REPO / "fixtures" / "checks" / "ok" / "two_stream_plan.json"
runner = CliRunner()

MODES = "max-autotune|reduce-overhead"
BACKENDS = "auto|npu|sim"
TYPES = "json|fx|pbtxt|txt|dot|svg|png|html"


def plain(text: str) -> str:
    """Help and error boxes without their borders and line breaks."""
    return "".join(text.replace("│", " ").split())


def help_of(*command: str) -> str:
    r = runner.invoke(build_app(), [*command, "--help"], env={"COLUMNS": "200"})  # choices on one line
    assert r.exit_code == 0, r.output
    return plain(r.stdout)


@pytest.mark.parametrize("command, choices", [
    (["compile"], [MODES, BACKENDS, "[pbtxt|txt|py],..."]),
    (["passes", "apply"], [MODES, BACKENDS]),
    (["passes", "explain"], [MODES, BACKENDS]),
    (["profile"], [MODES, BACKENDS]),
    (["run"], [BACKENDS]),
    (["dump"], [MODES, TYPES]),
    (["check"], [MODES]),
])
def test_help_lists_the_choices(command: list[str], choices: list[str]) -> None:
    text = help_of(*command)
    for choice in choices:
        assert plain(choice) in text, (command, choice)


@pytest.mark.parametrize("args, option, bad", [
    (["compile", SEED, "--mode", "fast"], "--mode", "fast"),
    (["compile", SEED, "--backend", "gpu"], "--backend", "gpu"),
    (["compile", SEED, "--dump-type", "pbtxt,dot"], "--dump-type", "dot"),
    (["passes", "apply", YAML, "--model", SEED, "--mode", "Max-Autotune"], "--mode", "Max-Autotune"),
    (["passes", "explain", YAML, "--model", SEED, "--backend", "cuda"], "--backend", "cuda"),
    (["profile", SEED, "--mode", "default"], "--mode", "default"),
    (["profile", SEED, "--backend", "cpu"], "--backend", "cpu"),
    (["run", "--backend", "cpu", SEED], "--backend", "cpu"),
    (["dump", GRAPH, "--type", "jpeg"], "--type", "jpeg"),
    (["dump", GRAPH, "--mode", "eager"], "--mode", "eager"),
    (["check", GRAPH, "--mode", "eager"], "--mode", "eager"),
])
def test_invalid_choice_is_a_usage_error_naming_the_choices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            args: list, option: str, bad: str) -> None:
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(build_app(), [str(a) for a in args])
    assert r.exit_code == 2, r.output
    text = plain(r.output)
    assert plain(f"Invalid value for '{option}'") in text and plain(f"'{bad}' is not one of") in text
    assert list(tmp_path.iterdir()) == [], "nothing ran"


def test_dump_type_accepts_the_strings_it_always_did() -> None:
    from airctl.cli.options import check_dump_types, dump_types

    for value in ("pbtxt", "pbtxt,txt,py", " txt , py", "", ","):
        assert check_dump_types(value) == value
    assert dump_types("pbtxt, txt") == ["pbtxt", "txt"] and dump_types(",") is None and dump_types(None) is None


def test_dump_type_completion_continues_the_list() -> None:
    assert complete_dump_types("") == ["pbtxt", "txt", "py"]
    assert complete_dump_types("p") == ["pbtxt", "py"]
    assert complete_dump_types("pbtxt,") == ["pbtxt,txt", "pbtxt,py"]
    assert complete_dump_types("pbtxt,t") == ["pbtxt,txt"]


def test_valid_choices_reach_the_command() -> None:
    r = runner.invoke(build_app(), ["check", str(GRAPH), "--mode", "reduce-overhead"])
    assert r.exit_code == 0, r.output
    assert "(reduce-overhead)" in r.stdout


def _commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    """Every leaf command of the click tree under ``group``, with its words."""
    subs = getattr(group, "commands", None)
    if subs is None:
        return [(path, group)]
    return [leaf for name, sub in sorted(subs.items()) for leaf in _commands(sub, (*path, name))]


def test_every_folder_of_ledgers_honours_airctl_out() -> None:
    """Where a command's option defaults to the folder of ledgers, AIRCTL_OUT sets it too: `run`,
    `import` and `bisect` once wrote to ./airctl-runs whatever the environment said."""
    import typer.main

    from airctl.cli.options import OUT_ENV, RUNS_DIR

    leaves = _commands(typer.main.get_command(build_app()))
    folders = [(words, p) for words, cmd in leaves for p in cmd.params if p.default == RUNS_DIR]
    assert len(folders) >= 10, [w for w, _ in folders]
    wrong = [" ".join(words) + " " + "/".join(p.opts) for words, p in folders if p.envvar != OUT_ENV]
    assert not wrong, f"these ignore {OUT_ENV}: {wrong}"
