"""The console script (``airctl``, ``python -m airctl``): arms the signals, runs the app, exits.

This module imports nothing heavy: SIGINT, SIGTERM and SIGHUP are armed
(:mod:`airctl.pipeline.run.signals`) before typer, torch, TorchAir or the user's script are
imported, so a signal at any moment ends a run the same way (exit 130, 143 or 129; the ledger
``interrupted`` or ``terminated``; before a ledger exists, nothing is left behind). When the
command is done, a thread the user's code left running cannot keep the process alive
(:func:`airctl.pipeline.run.boundary.exit_leaving_threads`).

The app itself, and the CLI's one error boundary, are :mod:`airctl.cli.app`.
"""

from __future__ import annotations

from typing import Any, NoReturn

from airctl.errors import Terminated, find_in_chain, interrupt_exit_code


def console() -> NoReturn:
    """The console script and ``python -m airctl``: the command, then the process ends. An interrupt
    that escapes :func:`run` (raised between two of its steps, where no ``except`` of its stands)
    ends the process as one caught inside it does (:func:`_end_interrupted`), never as Python ends
    on an uncaught ``KeyboardInterrupt``: its traceback, the interpreter's teardown, death by SIGINT."""
    _early_signals()
    try:
        run(whole_process=True)
    except KeyboardInterrupt as e:
        _end_interrupted(e)


_EARLY = {"SIGINT": (130, b"error: interrupted\n"), "SIGTERM": (143, b"error: terminated by SIGTERM\n"),
          "SIGHUP": (129, b"error: terminated by SIGHUP\n")}


def _early_signals() -> None:
    """From airctl's first instruction until :func:`run` arms its handlers (tens of milliseconds of
    imports later), a Ctrl-C, SIGTERM or SIGHUP ends the process as it would later, before any run
    began: said on stderr, exit 130, 143 or 129 — never Python's traceback and death by SIGINT. A
    signal the process ignores (``nohup``, a background job) stays ignored."""
    import signal

    for name in _EARLY:
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) in (signal.default_int_handler, signal.SIG_DFL):
            signal.signal(signum, _early_exit)


def _early_exit(signum: int, _frame: object) -> None:
    """Nothing has begun yet (no ledger, no output): say it and end at once."""
    import os
    import signal

    code, said = _EARLY.get(signal.Signals(signum).name, (128 + signum, b"error: interrupted\n"))
    try:
        os.write(2, said)
    except OSError:
        pass
    os._exit(code)


def run(argv: list[str] | None = None, whole_process: bool = False) -> NoReturn:
    """Run the app and exit with its code (``SystemExit``; ``whole_process``: the process ends here,
    :func:`airctl.pipeline.run.boundary.end_process`, and an interrupt delivered at any moment before
    it ends makes the exit code 130, 143 or 129, never 0: :func:`_final_code`). The console script
    (``whole_process``) hands the command to this install's warm process where there is one, else runs
    it here and may start one for the next command (:mod:`airctl.cli.warm`)."""
    import sys

    from airctl.cli import warm
    from airctl.pipeline.run import signals

    signals.arm()
    _replace_unencodable()
    args, cold = warm.without_flag(list(sys.argv[1:] if argv is None else argv))
    if whole_process and not cold:
        ending: list[int] = []
        try:
            served = warm.served(args, ending)
        except KeyboardInterrupt as e:  # before the client forwards signals: nothing was handed over yet
            raise SystemExit(_interrupted(e)) from None
        if served is not None:
            _end_served(served, ending)
    from airctl.pipeline.run.boundary import exit_leaving_threads, running_threads

    if whole_process:  # a compile's garbage is never walked after its last compile (airctl/io/gc_pause.py)
        from airctl.io.gc_pause import process_ends_with_command

        process_ends_with_command()
    before = running_threads()
    code: Any = 0
    late: KeyboardInterrupt | None = None
    try:
        code = _app_code(args)
    except KeyboardInterrupt as e:  # landed while the command's end was being handled
        late = e
    finally:
        while whole_process:  # the handler may run at hold()'s first bytecode, before it holds anything
            try:
                late = signals.hold() or late
                break
            except KeyboardInterrupt as e:
                late = late or e
        if not whole_process:
            signals.disarm()
    code = code if isinstance(code, int) else (0 if code is None else 1)
    if late is not None and code not in _INTERRUPT_CODES:
        code = _interrupted(late)
    _forget_caught_interrupts()
    if whole_process and not cold and late is None:
        warm.after_cold(args)
    exit_leaving_threads(code, before=before, whole_process=whole_process,
                         final_code=_final_code if whole_process else None)
    raise AssertionError("unreachable")  # pragma: no cover


_INTERRUPT_CODES = (130, 143, 129)


def _end_served(code: int, ending: list[int]) -> NoReturn:
    """End as the command the warm process ran ended (``code``; negative: die of that signal). An
    ending signal that reached this process after the command had ended (noted in ``ending`` by the
    client's handler, or held from :func:`~airctl.pipeline.run.signals.hold` on) makes it 130, 143 or
    129, as in a cold process (Python's own exit, with the client's handler still in place, lost it: exit 0)."""
    from airctl.errors import Terminated
    from airctl.pipeline.run import signals
    from airctl.pipeline.run.boundary import end_process
    from airctl.pipeline.warm.client import exit_as

    if code < 0:  # the command died of a signal: so does this process
        raise SystemExit(exit_as(code))
    signals.hold()  # the client's handlers, in place until then, raise nothing: they note

    def final(code: int) -> int:
        if code in _INTERRUPT_CODES:
            return code
        if ending:
            import signal

            return _interrupted(KeyboardInterrupt() if ending[0] == signal.SIGINT else
                                Terminated(ending[0], signal.Signals(ending[0]).name))
        return _final_code(code)

    end_process(code, final)
    raise AssertionError("unreachable")  # pragma: no cover


def _end_interrupted(stop: KeyboardInterrupt) -> NoReturn:
    """End the process on an interrupt that escaped :func:`run`: the signals held for the rest of it,
    said as any interrupt is, and the same last steps (``atexit``, ``os._exit``) with its code."""
    from airctl.pipeline.run import signals
    from airctl.pipeline.run.boundary import end_process

    while True:
        try:
            signals.hold()
            break
        except KeyboardInterrupt:  # the same signal sent again, or a second Ctrl-C: this one is said
            pass
    code = _interrupted(stop)
    _forget_caught_interrupts()
    end_process(code)
    raise AssertionError("unreachable")  # pragma: no cover


def _app_code(argv: list[str]) -> Any:
    """The app's exit code: its own, or an interrupt's that ended it before its boundary saw it."""
    from airctl.pipeline.run import signals

    try:
        from airctl.cli.app import run_app
        from airctl.pipeline.run.frame_stack import call_roomy

        call_roomy(run_app, argv)
    except SystemExit as e:
        # typer turns an interrupt that lands while it parses into Exit(130)
        stop = find_in_chain(e, KeyboardInterrupt, suppressed=False)
        return _interrupted(stop) if stop is not None else e.code
    except BaseException as e:  # before the app's boundary exists (typer, the commands still importing)
        stop = e if isinstance(e, KeyboardInterrupt) else signals.interrupt_behind(e)
        if stop is None:
            raise
        return _interrupted(stop)
    return 0


def _replace_unencodable() -> None:
    """Text the terminal's encoding cannot show (``Δ`` under ``PYTHONIOENCODING=ascii`` or a latin-1
    locale) is written as ``?``, never an error: the standard streams replace what they cannot encode."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # not a text stream we own, or closed
            pass


def _final_code(code: int) -> int:
    """``code``, or the code of a signal that arrived while the process was ending (held since
    :func:`~airctl.pipeline.run.signals.hold`), said on stderr: a Ctrl-C delivered before the
    process ends is never an exit 0."""
    from airctl.pipeline.run import signals

    stop = signals.held()
    if stop is None or code in _INTERRUPT_CODES:
        return code
    return _interrupted(stop)


def _forget_caught_interrupts() -> None:
    """Exit with airctl's code, not by SIGINT. CPython (3.11) remembers a ``KeyboardInterrupt`` raised
    in Python code that C code ran from a string (``PyRun_String``, file ``<string>``: where a Ctrl-C
    during TorchAir's import lands at times) as unhandled, even when airctl caught it further out;
    ``python -m airctl`` then dies by SIGINT at exit instead of exiting 130 (-2 to its parent, after
    the ledger said ``interrupted`` and the error was printed). Running a string the same way
    resets that memory."""
    import ctypes

    try:
        ctypes.pythonapi.PyRun_SimpleString(b"")
    except (AttributeError, OSError):  # no such entry point (another Python): nothing to reset
        pass


def _interrupted(stop: KeyboardInterrupt) -> int:
    """An interrupt that ended the command before the app's error boundary saw it: said, and its code."""
    import sys

    from airctl.pipeline.run import signals

    signals.seen()
    try:
        kept = getattr(stop, "airctl_ledger", None)
        said = (f"error: terminated by {stop.name}" if isinstance(stop, Terminated) else "error: interrupted") + \
            (f"; the run's ledger: {kept}" if kept else "") + "\n"
        sys.stderr.write(said)
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or broken: the exit code still says it
        pass
    return interrupt_exit_code(stop)


def __getattr__(name: str) -> Any:
    """``build_app``, ``report``, ... live in :mod:`airctl.cli.app` (imported when asked for)."""
    from airctl.cli import app

    return getattr(app, name)
