"""What the capture rules' run tests share: airctl's commands in this process (their scratch folder is
the ``workdir`` fixture, tests/verify/conftest.py)."""

from __future__ import annotations

from typer.testing import CliRunner

from airctl.cli.app import build_app
from tests.conftest import REPO

CAPTURE = REPO / "fixtures" / "checks" / "capture"
runner = CliRunner()


def airctl(*args: object):  # noqa: ANN201 - click's Result
    return runner.invoke(build_app(), [str(a) for a in args])
