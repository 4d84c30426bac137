"""What to compile and how: the one typed target every request composes.

``airctl compile``, ``passes apply``, ``profile``, ``run``, each ``bisect`` step and each rank of
``--nproc`` compile (or run) a model with the same per-compile settings: the model script and its
entry, the mode, the backend, the mode's ``--option``s, the pass file, the tolerance of the eager
check, what the ledger keeps, the seed. They live here once. Each request
(:class:`~airctl.pipeline.compile.request.CompileRequest`,
:class:`~airctl.pipeline.script.runner.RunRequest`,
:class:`~airctl.pipeline.profile.ProfileRequest`,
:class:`~airctl.pipeline.bisect.bisect.BisectRequest`,
:class:`~airctl.pipeline.ranks.worker.RankRequest`) holds a ``target`` field instead of copies of
these fields, so an option every mode honours is one field here, its CLI declaration and the code
that uses it (docs/architecture.md, "Where a change goes").

The target travels to the ranks of a multi-rank run as JSON (``ranks/request.json``):
:meth:`Target.to_json` and :meth:`Target.from_json` convert each field explicitly, no pickle.

>>> t = Target(Path("model.py"), mode="reduce-overhead", options={"capture_limit": "2"})
>>> t.mode is Mode.REDUCE_OVERHEAD, t.to_json()["mode"], t.to_json()["options"]
(True, 'reduce-overhead', {'capture_limit': '2'})
>>> Target.from_json(t.to_json()) == t
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from airctl.errors import AirctlError
from airctl.execute.compare import DEFAULT_ATOL
from airctl.modes import BackendName, Capture, Mode

Progress = Callable[[str], None]  # how every request's run says what it is doing (a spinner, stderr)


@dataclass(frozen=True)
class Target:
    """A model, how TorchAir compiles it, and the settings every compiling command shares."""

    model_path: Path
    mode: Mode = Mode.MAX_AUTOTUNE
    entry: str | None = None  # --entry: the function giving (model, inputs)
    backend: BackendName = BackendName.AUTO
    options: dict[str, str] = field(default_factory=dict)  # --option KEY=VALUE: the mode's config
    passes_file: Path | None = None  # --passes: a YAML pass file
    atol: float = DEFAULT_ATOL  # tolerance of the check against eager PyTorch
    capture: Capture = Capture.DEFAULT  # how much of the compile the ledger keeps
    dump_types: tuple[str, ...] | None = None  # --dump-type (None: the capture level's for the mode)
    torchair_off: tuple[str, ...] = ()  # TorchAir passes switched off (airctl bisect; hooks/pass_switch.py)
    verbose: bool = False  # -v: TorchAir's warnings printed as they come (also AIRCTL_VERBOSE=1)
    seed: int | None = None  # --seed: torch, random and numpy seeded before the eager and the compiled run

    def __post_init__(self) -> None:
        for name, kind in _ENUMS.items():  # a value the enum lacks stays as given: the compile refuses it
            value = getattr(self, name)
            if not isinstance(value, kind) and value in {m.value for m in kind}:
                object.__setattr__(self, name, kind(value))
        object.__setattr__(self, "model_path", Path(self.model_path))
        if self.passes_file is not None:
            object.__setattr__(self, "passes_file", Path(self.passes_file))
        for name in ("dump_types", "torchair_off"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(value))

    def to_json(self) -> dict[str, Any]:
        """Every field as plain JSON (paths and enums as strings, tuples as lists)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Target:
        """The target :meth:`to_json` wrote; an unknown key is an error (a request from another airctl)."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise AirctlError(f"unknown target field(s) {', '.join(unknown)}",
                              hint="the request was written by another airctl version")
        return cls(**{k: _DECODE.get(k, _same)(v) if v is not None else None for k, v in data.items()})


@dataclass(frozen=True)
class EveryMode:
    """The settings every compiling command honours, whatever it compiles (a model script it was
    given, a run's model, each candidate of ``passes suggest``): each is a :class:`Target` field of
    the same name. The command line declares each once (``airctl.cli.target.OPTIONS``); a command
    hands one ``EveryMode`` down, and whatever compiles builds its Target with :meth:`target`, so an
    option every mode honours is a field here and in Target, its declaration, and the code that uses it.

    >>> EveryMode(seed=7).target(Path("m.py"), mode="npugraph_ex").seed
    7
    """

    backend: BackendName = BackendName.AUTO
    seed: int | None = None

    def target(self, model: Path | str, **settings: Any) -> Target:
        """The Target of ``model`` with these settings and the command's own (mode, entry, pass file, …)."""
        return Target(Path(model), **{f.name: getattr(self, f.name) for f in fields(self)}, **settings)

    @classmethod
    def of(cls, target: Target) -> EveryMode:
        """The settings a Target carries (a run's, passed on to what it compiles next)."""
        return cls(**{f.name: getattr(target, f.name) for f in fields(cls)})

    @classmethod
    def of_run(cls, index: Any) -> EveryMode:
        """The settings a run was made with, from its ``index.json`` (the backend it ran on, its seed)."""
        backend = (getattr(index, "backend", None) or {}).get("name")
        return cls(backend=BackendName(backend) if backend in {b.value for b in BackendName} else BackendName.AUTO,
                   seed=getattr(index, "seed", None))

    def over(self, base: EveryMode) -> EveryMode:
        """These settings where the command line gave one (not the default), else ``base``'s: a command
        that compiles a run's model again keeps the run's settings unless told otherwise.

        >>> EveryMode(seed=3).over(EveryMode(backend=BackendName.SIM, seed=1))
        EveryMode(backend=<BackendName.SIM: 'sim'>, seed=3)
        """
        default = EveryMode()
        return EveryMode(**{f.name: getattr(base, f.name) if getattr(self, f.name) == getattr(default, f.name)
                            else getattr(self, f.name) for f in fields(self)})


_ENUMS: dict[str, type[Mode] | type[BackendName] | type[Capture]] = {
    "mode": Mode, "backend": BackendName, "capture": Capture}
_DECODE: dict[str, Callable[[Any], Any]] = {"options": dict}


def _same(value: Any) -> Any:
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, (Mode, BackendName, Capture)):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value
