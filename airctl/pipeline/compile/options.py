"""``--option KEY=VALUE``, for every mode: text pairs from the command line, set on a mode's config.

Each option is checked against the config itself: an unknown key is refused with the closest
names, a value is converted by the option's own kind (a choice, an integer range, an int list, a
dict) and then set through the config, which validates it as ``torch.compile(..., options={...})``
would. TorchAir's nested options take dotted keys (``debug.graph_dump.type``). The options applied
are recorded in ``index.json`` (``options``).

>>> parse_options(["capture_limit=4", "force_eager = false"])
{'capture_limit': '4', 'force_eager': 'false'}
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

from airctl.errors import AirctlError
from airctl.modes import Mode


def parse_options(pairs: Sequence[str] | None) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` -> ``{KEY: VALUE}`` (values still text: the config gives them a type)."""
    options: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise AirctlError(f"--option {pair!r} is not KEY=VALUE",
                              hint="e.g. --option capture_limit=4 (npugraph_ex) or --option debug.run_eagerly=True")
        options[key.strip()] = value.strip()
    return options



def _is_option(value: Any) -> bool:
    return hasattr(value, "value") and hasattr(value, "default")


def option_names(config: Any, prefix: str = "") -> dict[str, Any]:
    """Every settable option of a TorchAir/npugraph_ex config, dotted, -> its option object."""
    names: dict[str, Any] = {}
    fixed = getattr(config, "_fixed_attrs", None)
    for key, value in vars(config).items():
        if key.startswith("__") or key == "_fixed_attrs" or (fixed is not None and key not in fixed):
            continue
        if _is_option(value):
            names[prefix + key] = value
        elif hasattr(value, "_fixed_attrs"):
            names.update(option_names(value, f"{prefix}{key}."))
    return names


def _choices(option: Any) -> list[Any]:
    optional = getattr(option, "optional", None)
    return list(optional) if isinstance(optional, (list, tuple)) else []


def _convert(key: str, text: str, option: Any) -> Any:
    kind = type(option).__name__
    if kind == "CallableValue":
        raise AirctlError(f"--option {key} takes a Python callable, not text",
                          hint="custom passes come from a pass file: --passes FILE.yaml (a `python` pass names "
                               "file.py:function)")
    choices = _choices(option)
    if choices:
        for choice in choices:
            if str(choice).lower() == text.lower() or (isinstance(choice, bool) and text.lower() == str(int(choice))):
                return choice
        raise AirctlError(f"--option {key}={text}: not one of its values",
                          hint="choose one of: " + ", ".join(str(c) for c in choices))
    if kind == "IntRangeValue":
        try:
            return int(text)
        except ValueError:
            raise AirctlError(f"--option {key}={text}: an integer is expected", hint=f"e.g. --option {key}=4") from None
    if kind in ("IntListValue", "DictOptionValue"):
        try:
            return json.loads(text)
        except ValueError:
            if kind == "IntListValue":
                try:
                    return [int(v) for v in text.split(",") if v.strip()]
                except ValueError:
                    pass
            raise AirctlError(f"--option {key}={text}: not valid JSON",
                              hint=f"e.g. --option {key}=[1,2]" if kind == "IntListValue"
                              else f"e.g. --option '{key}={{\"k\": \"v\"}}'") from None
    return None if text.lower() == "none" else text


def apply_options(config: Any, options: dict[str, str], mode: Mode) -> dict[str, Any]:
    """Set ``options`` on ``config`` (checked by the config); returns what was set, JSON-ready."""
    known = option_names(config)
    applied: dict[str, Any] = {}
    for key, text in options.items():
        option = known.get(key)
        if option is None:
            public = [k for k in known if not any(part.startswith("_") for part in k.split("."))]
            close = difflib.get_close_matches(key, public, n=3, cutoff=0.5)
            raise AirctlError(
                f"--option {key}: {mode}'s config has no such option"
                + (f"; did you mean {' or '.join(close)}?" if close else ""),
                hint="its options: " + ", ".join(sorted(public)))
        value = _convert(key, text, option)
        *path, leaf = key.split(".")
        owner = config
        for part in path:
            owner = getattr(owner, part)
        try:
            setattr(owner, leaf, value)
        except Exception as e:  # noqa: BLE001 - the config's own check: ValueError, TypeError, its wrapped errors
            message = str(e).split("\n")[0]
            choices = _choices(option)
            raise AirctlError(f"--option {key}={text}: {message}",
                              hint=("choose one of: " + ", ".join(map(str, choices))) if choices else
                              f"the default is {option.default!r}") from e
        applied[key] = value
    return applied
