"""The npugraph_ex mode of a compile, and ``--option KEY=VALUE`` for every mode.

npugraph_ex is not a ``config.mode`` of TorchAir's ``CompilerConfig`` but a package of its own in
the torch-npu wheel (reference/torchair.md, "npugraph_ex"): its own ``CompilerConfig`` (about 28
flat options), its own ``get_npu_backend`` and FX compiler, and no graph-dump option (its
generated code is what the ledger keeps). This module builds that config from a compile request
and picks the backend a config belongs to, so the compiler stays mode-agnostic.

``--option KEY=VALUE`` sets one option of the mode's config, checked against the config itself:
an unknown key is refused with the closest names, a value is converted by the option's own kind
(a choice, an integer range, an int list, a dict) and then set through the config, which
validates it as ``torch.compile(..., options={...})`` would. TorchAir's nested options take
dotted keys (``debug.graph_dump.type``). The options applied are recorded in ``index.json``
(``options``).

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


def is_npugraph_ex(mode: str) -> bool:
    return mode == Mode.NPUGRAPH_EX.value


def npugraph_ex_package() -> Any:
    """The wheel's npugraph_ex (sim puts it at ``npugraph_ex``; on an NPU torch_npu's lazy proxy does)."""
    import importlib

    try:
        return importlib.import_module("npugraph_ex")
    except ImportError as e:
        from airctl.errors import BackendError

        raise BackendError(f"npugraph_ex cannot be imported: {e}",
                           hint="npugraph_ex ships in torch-npu >= 2.13.0 (torch_npu/dynamo/npugraph_ex)") from e


# aclgraph passes npugraph_ex's config switches off (airctl bisect): pass -> (option, value that turns it off);
# the FX passes it runs through its observer are skipped there (airctl.sim.pass_switch)
OFF_SWITCHES = {"remove_cat_ops": ("remove_cat_ops", False), "reinplace_inplaceable_ops_pass": ("inplace_pass", False),
                "reinplace_input_mutated_ops": ("input_inplace_pass", False)}


def build_npugraph_ex_config(pre: Any, post: Any, torchair_off: Sequence[str] = ()) -> Any:
    """npugraph_ex's own ``CompilerConfig`` with airctl's pass hooks (YAML or raw callables) and the
    passes ``airctl bisect`` switches off."""
    config = npugraph_ex_package().CompilerConfig()
    for name in torchair_off:
        if name in OFF_SWITCHES:
            option, value = OFF_SWITCHES[name]
            setattr(config, option, value)
    if pre is not None:
        config.post_grad_custom_pre_pass = pre
    if post is not None:
        config.post_grad_custom_post_pass = post
    return config


def backend_for(torchair: Any, config: Any) -> Any:
    """The Dynamo backend a config belongs to: npugraph_ex's for its config, else TorchAir's."""
    if type(config).__module__.startswith("npugraph_ex"):
        return npugraph_ex_package().get_npu_backend(compiler_config=config)
    return torchair.get_npu_backend(compiler_config=config)


def compile_dynamic(mode: str) -> bool | None:
    """``torch.compile(dynamic=...)``: npugraph_ex runs as its users run it (Dynamo's default: a shape
    that changes makes the graph dynamic, and each new shape is a capture), the other modes static."""
    return None if is_npugraph_ex(mode) else False


# -- --option KEY=VALUE ----------------------------------------------------------------------------
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


def apply_options(config: Any, options: dict[str, str], mode: str) -> dict[str, Any]:
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
