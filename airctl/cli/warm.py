"""Warm commands: the console script's side of airctl's warm process (docs/warm.md).

A ledger-writing command spends seconds importing torch, TorchAir and the sim stand-ins before it
does anything of its own. After such a command ran cold, :func:`after_cold` starts a warm process
in the background (:mod:`airctl.pipeline.warm.daemon`) that imports them once; the next command
(:func:`served`) hands itself over to it (:mod:`airctl.pipeline.warm.client`) and is forked from
it, fresh for each command (:class:`Console` in the child runs exactly what this process would
have run: :func:`airctl.cli.main.run`). When it cannot be served warm — switched off
(``AIRCTL_WARM=0``, ``airctl --cold``), no warm process for this install and environment, one
still warming up (waiting for it would take longer than a cold start), a command that gains
nothing from one, ``--backend npu`` — it runs cold here, saying nothing; a bad warm setting
(``AIRCTL_WARM_DIR``, ``AIRCTL_WARM_IDLE``: :func:`airctl.pipeline.warm.place.problems`) is said
on stderr once a command would have started a warm process.

The warm process notes every file it imported once warm (:func:`airctl.pipeline.warm.place.imported_files`);
a command that finds one changed (an edit in site-packages or an editable checkout) runs cold, and
the warm process ends.

``python -P -m airctl.cli.warm FOLDER KEY`` is the warm process itself.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ENV = "AIRCTL_WARM"  # "0": every command cold, and no warm process started
FLAG = "--cold"
# the commands that import torch and TorchAir: served warm; those that do when given a model script
# (``check model.py``; of a ledger or a graph file they start in a fraction of a second cold)
WARM_COMMANDS = {"compile", "passes", "profile", "bisect", "run", "repro", "coverage"}
MODEL_COMMANDS = {"check", "dump", "diff"}
HELP = {"--help", "-h", "--version"}
# what a ledger-writing command imports on first use besides the backend's (the report, typer's parsing)
FIRST_USE = ("airctl.pipeline.apply", "airctl.pipeline.bisect.bisect", "airctl.pipeline.run.finish",
             "airctl.report.ledger_data", "airctl.report.page", "airctl.cli.summary", "airctl.execute.cuda",
             "airctl.verify.instrument", "typer._adapters")
_SERVING = False  # True in a child of the warm process: the command runs here, never handed on again
_IMPORTED: dict[str, tuple[int, int]] = {}  # in the warm process: the files it imported, as they were


def without_flag(argv: list[str]) -> tuple[list[str], bool]:
    """``argv`` less a leading ``--cold`` (a global option, before the command), and whether it was there."""
    head = 0
    while head < len(argv) and argv[head].startswith("-") and argv[head] != FLAG:
        head += 1
    if head < len(argv) and argv[head] == FLAG:
        return argv[:head] + argv[head + 1:], True
    return argv, False


def _command(argv: list[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


def warmable(argv: list[str]) -> bool:
    """Whether ``airctl ARGV`` imports torch (and so gains from a warm process)."""
    command = _command(argv)
    if HELP & set(argv):
        return False
    return command in WARM_COMMANDS or (command in MODEL_COMMANDS and any(a.endswith(".py") for a in argv))


def enabled(env: dict[str, str] | None = None) -> bool:
    """Whether warm commands are on for this process (and this system can have them)."""
    import socket

    from airctl.pipeline.warm.place import problems

    env = os.environ if env is None else env
    return (not _SERVING and env.get(ENV, "1") != "0" and hasattr(os, "fork") and hasattr(os, "pidfd_open")
            and hasattr(socket, "send_fds") and not problems(dict(env)))


def describe() -> dict[str, Any]:
    """This install's warm process, for ``airctl doctor``."""
    from airctl.pipeline.warm import place

    return place.describe(dict(os.environ), enabled())


def served(argv: list[str], ending: list[int] | None = None) -> int | None:
    """Run ``argv`` in this install's warm process when there is one: its exit code (negative: the
    signal it died of); None: run it cold here. ``ending``: the ending signals this process got, noted
    until it ends (:func:`airctl.pipeline.warm.client.relay`)."""
    if not enabled() or not warmable(argv):
        return None
    from airctl.pipeline.warm import client, place

    where = place.private(place.folder(), make=False)
    if where is None:
        return None
    key = place.key(dict(os.environ))
    address = place.files(where, key)["sock"]
    if not address.exists() or (place.state(where, key) or {}).get("status") != "serving":
        return None  # none, or one still warming up: waiting for it would be slower than a cold start
    code = client.relay(str(address), argv, argv0=sys.argv[0], path0=sys.path[0] if sys.path else "", ending=ending)
    return None if isinstance(code, str) else code


def after_cold(argv: list[str]) -> None:
    """After a command ran cold: start this install's warm process in the background, where the
    command imported torch (it would have gained from one) and none serves or was refused."""
    if "torch" not in sys.modules or not warmable(argv):
        return
    if not enabled():
        _say_problems()
        return
    try:
        from airctl.pipeline.warm import daemon, place

        where = place.private(place.folder())
        if where is None or not place.socket_fits(place.files(where, "k" * 20)["sock"]):
            return
        key = place.key(dict(os.environ))
        if daemon.alive(where, key) or (place.state(where, key) or {}).get("status") == "refused":
            return
        daemon.spawn(__name__, where, key)
    except OSError:  # a full disk, a folder that went away: the next command runs cold too
        pass


def _say_problems() -> None:
    """A bad warm setting, said once on stderr where a warm process would have started."""
    from airctl.pipeline.warm.place import problems

    if os.environ.get(ENV, "1") == "0" or _SERVING:
        return
    for problem in problems():
        print(f"airctl: warm commands are off: {problem} (docs/warm.md)", file=sys.stderr)


def stale() -> str | None:
    """In the warm process: a file it imported that changed since (None: none)."""
    from airctl.pipeline.warm.place import first_changed

    found = first_changed(_IMPORTED)
    return None if found is None else f"{found} changed since the warm process imported it"


class Console:
    """The warm process's :class:`~airctl.pipeline.warm.server.Program`: ``airctl ARGS`` as the
    console script runs it; requests that a fresh process would run otherwise are sent back cold."""

    def __init__(self, key: str) -> None:
        self.key = key

    def refuse(self, request: dict[str, Any]) -> str | None:
        return None

    def cold(self, request: dict[str, Any]) -> str | None:
        import threading

        from airctl.pipeline.warm import client, place

        env = {str(k): str(v) for k, v in request["env"].items()}
        argv = [str(a) for a in request["argv"]]
        if threading.active_count() != 1:
            return "the warm process runs other threads (a fork would copy locks they hold)"
        if place.differs(env, dict(os.environ)) or place.python_path(env) != place.python_path(dict(os.environ)):
            return "the environment differs in what is read at start"
        if request.get("interpreter") != client.interpreter():
            return "another interpreter, or other interpreter options"
        if "--backend=npu" in argv or any(a in ("--backend", "-b") and b == "npu"
                                          for a, b in zip(argv, argv[1:], strict=False)):
            return "the npu backend's processes start fresh"
        if place.key(dict(os.environ)) != self.key:
            return "the install changed"
        return stale()

    def run(self, request: dict[str, Any]) -> int:
        """In the child: the console script, with the caller's argv and path."""
        global _SERVING
        from airctl.pipeline.warm.child import std_streams

        _SERVING = True
        std_streams(unbuffered=bool(os.environ.get("PYTHONUNBUFFERED")))
        if request.get("path0") is not None:
            sys.path.insert(0, str(request["path0"]))
        sys.argv = [str(request.get("argv0") or Path(__file__).parents[1] / "__main__.py"), *request["argv"]]
        from airctl.cli.main import run

        run(list(sys.argv[1:]), whole_process=True)  # ends the process
        return 0


def warm_up() -> tuple[str | None, dict[str, float]]:
    """What every warm command would import, imported once, in the order a cold command imports it:
    why it cannot serve (None: it can), and the seconds each part took (``cli``: typer, rich and
    the commands; ``torch_and_torchair``; ``others``; ``first_use``: what a command would import and
    cache on first use, :meth:`~airctl.backends.interface.Backend.warm`)."""
    import gc
    import importlib
    import importlib.util
    import threading
    import time

    from airctl.backends import warm
    from airctl.cli.app import build_app
    from airctl.errors import AirctlError
    from airctl.pipeline.ranks.forks import RANK_MODULES

    t0 = time.perf_counter()
    build_app()  # typer, rich and every command module
    imports = {"cli": time.perf_counter() - t0}
    try:
        backend = warm("auto")
        if backend is None:
            why = "the backend auto picks (npu) needs fresh processes: a device runtime does not survive a fork"
            return why, imports
    except AirctlError as e:
        return f"no backend: {e.message}", imports
    imports["torch_and_torchair"] = time.perf_counter() - t0 - imports["cli"]
    for name in (*RANK_MODULES, *FIRST_USE):
        importlib.import_module(name)
    if importlib.util.find_spec("transformers") is not None:  # what the model scripts of most users load
        importlib.import_module("transformers")
    imports["others"] = time.perf_counter() - t0 - sum(imports.values())
    backend.warm(first_use=True)  # what a command meets on first use, inside its compile
    imports["first_use"] = time.perf_counter() - t0 - sum(imports.values())
    imports = {k: round(v, 3) for k, v in imports.items()}
    if threading.active_count() != 1:
        why = f"the warm-up left {threading.active_count() - 1} thread(s) running: a fork would copy their locks"
        return why, imports
    from airctl.pipeline.warm.place import imported_files

    _IMPORTED.update(imported_files())
    gc.collect()
    gc.freeze()  # the warm heap stays out of the children's collections (they would copy every page)
    return None, imports


def main(argv: list[str]) -> int:
    from airctl.pipeline.warm import daemon

    where, key = Path(argv[0]), argv[1]
    return daemon.live(where, key, Console(key), warm_up, respawn=__name__, stale=stale)


if __name__ == "__main__":  # through the module's import: a child sets its _SERVING, not __main__'s
    from airctl.cli.warm import main as warm_main

    sys.exit(warm_main(sys.argv[1:]))
