"""Every ``AIRCTL_*`` setting read from the environment, checked once when a command starts.

A setting mistyped in a shell profile (``AIRCTL_TOOL_TIMEOUT=abc``, ``-1``, ``nan``) was taken
silently for its default, and the user never learned why dot was stopped after 120 s. Each setting
airctl reads is in :data:`SETTINGS` with what it accepts; :func:`check_environment` (the app's
callback, before any command) refuses a bad value with an error naming the variable, and the
readers parse values through :func:`number` so the rule is written once. ``AIRCTL_OUT`` and
``AIRCTL_TRACEBACK`` are options' ``envvar``: click checks them with the option.

This module sits on the floor: it imports nothing of airctl but errors.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from airctl.errors import AirctlError


@dataclass(frozen=True)
class Setting:
    name: str
    accepts: str  # said in the error
    words: tuple[str, ...] = ()  # the values accepted, when a choice
    positive_number: bool = False


TOOL_TIMEOUT = Setting("AIRCTL_TOOL_TIMEOUT", "a number of seconds above 0", positive_number=True)
SETTINGS = (
    TOOL_TIMEOUT,
    Setting("AIRCTL_RANK_FORKS", "0 (each rank a fresh interpreter) or 1", words=("0", "1")),
    Setting("AIRCTL_VERBOSE", "0 or 1", words=("0", "1")),
    Setting("AIRCTL_SIM_CHILD", "0 or 1 (set by airctl for the processes it starts)", words=("0", "1")),
)


def number(setting: Setting, text: str) -> float:
    """``text`` as ``setting``'s positive, finite number; AirctlError naming the variable otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        raise _bad(setting, text)
    return value


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """AirctlError (exit 2) for the first ``AIRCTL_*`` setting whose value is not one it accepts;
    an empty value is as if unset."""
    environ = os.environ if environ is None else environ
    for setting in SETTINGS:
        text = environ.get(setting.name, "").strip()
        if not text:
            continue
        if setting.positive_number:
            number(setting, text)
        elif setting.words and text not in setting.words:
            raise _bad(setting, text)


def _bad(setting: Setting, text: str) -> AirctlError:
    shown = text[:40] + ("..." if len(text) > 40 else "")
    return AirctlError(f"{setting.name}={shown!r} is not valid: it takes {setting.accepts}",
                       hint=f"set {setting.name} to {setting.accepts}, or unset it for the default "
                            "(docs/reliability.md lists the settings)")
