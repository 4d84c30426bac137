"""Where a user's warm process lives, and which install it belongs to.

One private folder per user: ``$AIRCTL_WARM_DIR``, else ``$XDG_RUNTIME_DIR/airctl-warm``, else
``<tmp>/airctl-warm-<uid>``. It is made mode 0700 and used only if it is a real folder (not a
link), owned by this user and closed to others (:func:`private`). In it, for each *key*:

- ``<key>.sock``: the warm process's Unix socket (only this user can reach it; the server checks
  each peer's uid again);
- ``<key>.lock``: held (``flock``) by the warm process for its whole life, so only one serves a key;
- ``<key>.json``: its state (pid, started, commands served), which ``airctl doctor`` shows;
- ``<key>.log``: its own stderr (a warm-up that failed says why there).

The key (:func:`key`) names one install and one environment: the Python executable, every file of
the airctl package (path, size, modification time), the folders packages are installed into
(site-packages and ``PYTHONPATH``: ``pip install`` of torch, torch-npu or airctl changes their
modification time) and ``pyvenv.cfg``, and the environment variables read when torch, TorchAir or
Python start (:func:`import_env`). Any change gives another key: the next command does not reach
the old warm process, which notices its key is no longer the install's and ends
(:mod:`airctl.pipeline.warm.daemon`). Computing it costs a few milliseconds and imports nothing.

The key cannot see an edit inside a package already installed (a TorchAir pass edited in an
editable checkout, a patched file of transformers): a folder's time changes only when a file is
added or removed. So the warm process also notes every file it imported (:func:`imported_files`,
size and modification time) and, before each command and every few seconds, looks for one that
changed (:func:`first_changed`): the command then runs cold, seeing the edit, and the warm process
ends (the next cold command starts a new one).

Settings come from the environment and are checked (:func:`problems`): ``AIRCTL_WARM_DIR`` must be
an absolute path (a relative one would name another folder in every working folder),
``AIRCTL_WARM_IDLE`` a number of seconds. A bad value turns warm commands off, said on stderr and
by ``airctl doctor``, never a crash of the warm process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import stat
import sys
import sysconfig
import tempfile
from pathlib import Path

ENV_DIR = "AIRCTL_WARM_DIR"
IDLE_ENV = "AIRCTL_WARM_IDLE"
IDLE_S = 900.0  # 15 minutes without a command
PACKAGE = Path(__file__).resolve().parents[2]  # the airctl package
# read when torch, Dynamo, Inductor or Python start, or when the backend is chosen: a command whose
# environment differs in one of these needs a process that starts again
IMPORT_PREFIXES = ("TORCH", "PYTORCH", "TORCHINDUCTOR", "TORCHDYNAMO", "PYTHON", "ASCEND", "LC_", "HF_",
                   "TRANSFORMERS", "TOKENIZERS")
IMPORT_NAMES = {"LANG", "LD_LIBRARY_PATH", "LD_PRELOAD", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                "CUDA_VISIBLE_DEVICES", "ASDOPS_LOG_LEVEL"}
IMPORT_EXEMPT = {
    "TORCH_DEVICE_BACKEND_AUTOLOAD",  # read by ``import torch`` only; airctl sets it itself
    "TORCHINDUCTOR_CACHE_DIR",  # read when the cache is first used, and then set by torch itself
    "PYTHONPATH",  # compared as the folders it names (:func:`key`)
    "PYTHONUNBUFFERED",  # the child's streams are made as the caller's environment says
    "PYTHON",  # Python reads PYTHON<NAME> only; scripts use the bare name for an interpreter (a repro's run.sh)
}


def import_env(env: dict[str, str]) -> dict[str, str]:
    """The variables of ``env`` read at start (see :data:`IMPORT_PREFIXES`)."""
    return {k: v for k, v in env.items()
            if (k.startswith(IMPORT_PREFIXES) or k in IMPORT_NAMES) and k not in IMPORT_EXEMPT}


def differs(env: dict[str, str], ours: dict[str, str]) -> list[str]:
    """The variables read at start that ``env`` sets otherwise than ``ours``."""
    a, b = import_env(env), import_env(ours)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def python_path(env: dict[str, str]) -> list[str]:
    """The folders ``PYTHONPATH`` puts on the path, each once, resolved."""
    seen: list[str] = []
    for part in env.get("PYTHONPATH", "").split(os.pathsep):
        if part:
            path = os.path.realpath(part)
            if path not in seen:
                seen.append(path)
    return seen


def _stat(path: str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return f"{path}:-"
    return f"{path}:{info.st_size}:{info.st_mtime_ns}"


def install(env: dict[str, str]) -> str:
    """A digest of the install (see the module): any ``pip install`` or edit of airctl changes it."""
    digest = hashlib.sha256()
    package = PACKAGE
    parts = [sys.version, _stat(os.path.realpath(sys.executable)), _stat(os.path.join(sys.prefix, "pyvenv.cfg"))]
    for scheme in ("purelib", "platlib"):
        parts.append(_stat(sysconfig.get_paths()[scheme]))
    parts += [_stat(p) for p in python_path(env)]
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        parts += [_stat(os.path.join(root, name)) for name in sorted(files) if not name.endswith((".pyc", ".pyo"))]
    digest.update("\n".join(parts).encode())
    return digest.hexdigest()


def key(env: dict[str, str]) -> str:
    """The key of this install and of ``env``'s variables read at start."""
    digest = hashlib.sha256(install(env).encode())
    digest.update(json.dumps([python_path(env), sorted(import_env(env).items())]).encode())
    return digest.hexdigest()[:20]


def folder(env: dict[str, str] | None = None) -> Path:
    """The user's warm folder (see the module); not made here."""
    env = os.environ if env is None else env
    if env.get(ENV_DIR):
        return Path(env[ENV_DIR])
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "airctl-warm"
    return Path(tempfile.gettempdir()) / f"airctl-warm-{os.getuid()}"


def idle_seconds(env: dict[str, str] | None = None) -> float:
    """``AIRCTL_WARM_IDLE`` (default :data:`IDLE_S`); ValueError saying why for a bad value."""
    env = os.environ if env is None else env
    text = env.get(IDLE_ENV, "").strip()
    if not text:
        return IDLE_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{IDLE_ENV}={text!r} is not a number of seconds above 0 (e.g. {IDLE_S:g})")
    return value


def problems(env: dict[str, str] | None = None) -> list[str]:
    """What is wrong with the warm settings of ``env`` (none: warm commands may run)."""
    env = os.environ if env is None else env
    found = []
    where = env.get(ENV_DIR)
    if where and not os.path.isabs(where):
        found.append(f"{ENV_DIR}={where!r} is not an absolute path (give the full path of a private folder)")
    try:
        idle_seconds(env)
    except ValueError as e:
        found.append(str(e))
    return found


def private(path: Path, make: bool = True) -> Path | None:
    """``path`` as a folder of this user's alone (made 0700 when ``make``); None where it is not one:
    missing, a link, someone else's, or open to others."""
    if make and path.is_absolute():
        with contextlib.suppress(FileExistsError, FileNotFoundError):
            path.mkdir(mode=0o700)
    return path if not_private(path) is None else None


def not_private(path: Path) -> str | None:
    """Why ``path`` is not a folder of this user's alone (None: it is one)."""
    if not path.is_absolute():
        return "not an absolute path"
    try:
        info = path.lstat()
    except OSError:
        return "missing"
    if stat.S_ISLNK(info.st_mode):
        return "a link"
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder"
    if info.st_uid != os.getuid():
        return f"owned by uid {info.st_uid}, not this user"
    if info.st_mode & 0o077:
        return f"open to others (mode {stat.S_IMODE(info.st_mode):o}; chmod 700 makes it private)"
    return None


def install_id() -> str:
    """This install: its interpreter and airctl package (a warm process of another venv or checkout
    has another)."""
    return f"{os.path.realpath(sys.executable)}|{PACKAGE}"


def imported_files() -> dict[str, tuple[int, int]]:
    """Every file this process imported a module from: (size, modification time in ns)."""
    out: dict[str, tuple[int, int]] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or path in out:
            continue
        try:
            info = os.stat(path)
        except OSError:
            continue
        out[path] = (info.st_size, info.st_mtime_ns)
    return out


def first_changed(noted: dict[str, tuple[int, int]]) -> str | None:
    """The first of ``noted`` that changed (size or modification time) or went away since it was
    noted; None: none. (Files written while the warm process warmed up, as Inductor's generated
    modules are, are noted as they were then: only later edits count.)"""
    for path, (size, mtime) in noted.items():
        try:
            info = os.stat(path)
        except OSError:
            return path
        if info.st_size != size or info.st_mtime_ns != mtime:
            return path
    return None


def files(place: Path, k: str) -> dict[str, Path]:
    """The files of key ``k`` in ``place``."""
    return {ext: place / f"{k}.{ext}" for ext in ("sock", "lock", "json", "log")}


def state(place: Path, k: str) -> dict | None:
    """The state a warm process wrote for key ``k`` (None: none)."""
    try:
        found = json.loads(files(place, k)["json"].read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def write_state(place: Path, k: str, **fields: object) -> None:
    """Replace the state of key ``k`` (written aside, then renamed: a reader never sees half of it)."""
    target = files(place, k)["json"]
    aside = target.with_name(f".{target.name}.{os.getpid()}")
    aside.write_text(json.dumps(fields, indent=1))
    os.replace(aside, target)


def socket_fits(path: Path) -> bool:
    return len(str(path).encode()) <= 100  # sun_path holds 108 bytes


def describe(env: dict[str, str], enabled: bool) -> dict[str, object]:
    """The warm process of this install and environment, as ``airctl doctor`` shows it: what is
    true now, and what the next command will do."""
    where = folder(env)
    k = key(env)
    wrong = problems(env)
    refused = not_private(where) if where.exists() or where.is_symlink() else None
    about: dict[str, object] = {"enabled": enabled and not wrong and refused is None, "folder": str(where), "key": k,
                                "folder_ok": refused is None}
    if wrong:
        about["status"] = "off: " + "; ".join(wrong)
        return about
    if refused is not None:
        about["status"] = (f"off: the folder {where} is refused ({refused}); no warm process starts until it is "
                           f"a private folder of this user's (or {ENV_DIR} names one)")
        return about
    current = state(where, k) if where.exists() else None
    alive_socket = where.exists() and files(where, k)["sock"].exists()
    if current is None or (current.get("status") != "refused" and not alive_socket):
        about["status"] = "none (the next ledger-writing command runs cold and starts one)" if enabled else "off"
        return about
    about.update({name: current.get(name) for name in ("status", "pid", "started", "idle_s", "forked", "cold",
                                                        "reason", "imports") if current.get(name) is not None})
    return about
