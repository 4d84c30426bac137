"""One typed Target composes every request: no request repeats its fields, the ranks compile the
target they read back from request.json, it travels as plain JSON with its types kept, and every
compiling command offers every option of EveryMode. Together: an option every mode honours is one
Target field, one EveryMode declaration and the code that uses it (docs/architecture.md)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from airctl.cli.app import build_app
from airctl.cli.target import EveryMode
from airctl.pipeline.target import Target


@pytest.mark.parametrize("command", ["compile", "profile"])
def test_a_rank_compiles_the_target_it_reads(monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    import torch.distributed as dist

    import airctl.pipeline.compile.compiler as compiler
    import airctl.pipeline.profile as profile
    from airctl.pipeline.ranks import worker

    asked: list[Target] = []

    def record(req: object, progress: object = None) -> object:
        asked.append(req.target)  # type: ignore[attr-defined]
        raise SystemExit(0)

    monkeypatch.setattr(dist, "init_process_group", lambda *a, **k: None)
    monkeypatch.setattr(compiler, "compile_model", record)
    monkeypatch.setattr(profile, "profile_model", record)
    target = Target(Path("model.py"), mode="reduce-overhead", options={"capture_limit": "2"})
    with pytest.raises(SystemExit):
        worker._compile(worker.RankRequest(command=command, target=target), None, lambda _msg: None)
    assert asked == [target]


def test_requests_compose_the_target_instead_of_copying_its_fields() -> None:
    from airctl.pipeline.bisect.bisect import BisectRequest
    from airctl.pipeline.compile.request import CompileRequest
    from airctl.pipeline.profile import ProfileRequest
    from airctl.pipeline.ranks.worker import RankRequest
    from airctl.pipeline.script.runner import RunRequest

    target_fields = {f.name for f in dataclasses.fields(Target)}
    for request in (CompileRequest, RunRequest, ProfileRequest, BisectRequest, RankRequest):
        names = {f.name for f in dataclasses.fields(request)}
        assert "target" in names and not names & target_fields, request.__name__


@pytest.mark.parametrize("command", [["compile"], ["passes", "apply"], ["passes", "explain"], ["profile"], ["run"],
                                     ["bisect"]])
def test_every_compiling_command_offers_every_shared_option(command: list[str]) -> None:
    r = CliRunner().invoke(build_app(), [*command, "--help"])
    assert r.exit_code == 0, r.output
    for f in dataclasses.fields(EveryMode):
        assert f"--{f.name}" in r.output, (command, f.name)


def test_the_target_travels_as_json_and_keeps_its_types() -> None:
    from airctl.modes import BackendName, Capture, Mode

    target = Target(Path("m.py"), mode="npugraph_ex", backend="sim", capture="full", dump_types=["py"],
                    passes_file="p.yaml", torchair_off=["a"], options={"k": "v"})
    data = json.loads(json.dumps(target.to_json()))
    back = Target.from_json(data)
    assert back == target and back.mode is Mode.NPUGRAPH_EX and back.backend is BackendName.SIM
    assert back.capture is Capture.FULL and back.passes_file == Path("p.yaml") and back.dump_types == ("py",)
    with pytest.raises(Exception, match="unknown target field"):
        Target.from_json({**data, "colour": "red"})
