"""How a script's end becomes airctl's exit code and traceback (airctl/pipeline/script/errors.py)."""

from __future__ import annotations

import traceback

from airctl.pipeline.script import errors as run_errors
from airctl.pipeline.script.errors import from_exception, from_system_exit


def test_system_exit_codes_follow_the_interpreter() -> None:
    assert from_system_exit(SystemExit()).exit_code == 0
    assert from_system_exit(SystemExit(None)).exit_code == 0
    assert from_system_exit(SystemExit(7)).exit_code == 7
    end = from_system_exit(SystemExit("bad input"))
    assert (end.exit_code, end.message) == (1, "bad input")


def _user_code() -> None:
    raise KeyError("from the user's code")


def _airctl_wrapper(fn):  # noqa: ANN001, ANN202 - stands in for a frame inside airctl/pipeline
    return fn()


# compile the wrapper as if it lived in airctl/pipeline/ so its frame is one of airctl's
_code = _airctl_wrapper.__code__.replace(co_filename=str(run_errors._AIRCTL / "pipeline" / "fake.py"))
_airctl_wrapper.__code__ = _code


def test_airctl_frames_are_removed_from_every_chained_traceback() -> None:
    try:
        try:
            _airctl_wrapper(_user_code)
        except KeyError as inner:
            raise RuntimeError("outer") from inner
    except RuntimeError as e:
        end = from_exception(e)
    assert end.exit_code == 1
    text = end.traceback
    assert "fake.py" not in text
    assert "_user_code" in text and "KeyError: \"from the user's code\"" in text
    assert text.rstrip().endswith("RuntimeError: outer")
    assert text == "".join(traceback.format_exception(end.exception))
