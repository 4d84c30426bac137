"""Pausing the cyclic collector around bulk graph work: pauses nest and overlap across threads, and the
collector comes back exactly as it was (a compile's background writer pauses while the compile does)."""

from __future__ import annotations

import gc
import threading

import pytest

from airctl.io.gc_pause import gc_paused, without_gc


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()  # as it was, also after a test that left it held


def test_the_collector_is_off_inside_and_back_after_nested_pauses() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause ending does not end the outer one
    assert gc.isenabled()


def test_overlapping_pauses_on_two_threads_end_when_the_last_one_does() -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            entered.set()
            release.wait(5)

    t = threading.Thread(target=other)
    with gc_paused():
        t.start()
        assert entered.wait(5)
    assert not gc.isenabled()  # this thread's pause is over, the other thread's is not
    release.set()
    t.join(5)
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_an_exception_inside_a_paused_function_still_brings_the_collector_back() -> None:
    @without_gc
    def fails() -> None:
        assert not gc.isenabled()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert gc.isenabled()


SETTLE = """
import gc
from airctl.io.gc_pause import gc_paused
{freeze}
gc.collect()
with gc_paused(settle={settle}):
    held = [[i] for i in range(50_000)]  # what a command reads: far over a young collection's threshold
    assert not gc.isenabled()
on = gc.isenabled()
# the generation holding them: 1 once a young collection walked them, 2 when handed over unwalked
where = [g for g in range(3) if any(o is held for o in gc.get_objects(generation=g))]
print(on, where, gc.get_freeze_count() > 0)
"""


def _settle(settle: bool, freeze: bool = False) -> str:
    import subprocess
    import sys

    from tests.conftest import REPO

    code = SETTLE.format(settle=settle, freeze="gc.freeze()" if freeze else "")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_a_settled_pause_hands_its_objects_to_the_oldest_generation_unwalked() -> None:
    # a fresh process: the test workers froze their heap, and a settle never thaws a frozen heap
    assert _settle(True) == "True [2] False"  # on again, handed to the oldest generation unwalked, nothing frozen
    assert _settle(False) == "True [1] False"  # a plain pause: the next young collection walked them


def test_a_settled_pause_leaves_a_frozen_heap_frozen() -> None:
    assert _settle(True, freeze=True) == "True [1] True"


def test_a_held_pause_keeps_the_collector_off_until_the_next_compile_collects(monkeypatch) -> None:
    import weakref

    from airctl.io import gc_pause

    monkeypatch.setattr(gc_pause, "_ends_with_command", True)  # as the console script says of its process
    monkeypatch.setattr(gc_pause, "_held", False)
    with gc_paused(hold=True):  # a compile
        pass
    assert not gc.isenabled()  # held: the command prints its result and ends without a collection
    with gc_paused():  # a background writer's pause meanwhile does not turn it on
        pass
    assert not gc.isenabled()

    class Cycle:
        pass

    garbage = Cycle()
    garbage.me = garbage
    gone = weakref.ref(garbage)
    del garbage
    assert gone() is not None  # waits, as it would inside a pause
    with gc_paused(hold=True):  # the next compile begins with the young collection owed
        assert gone() is None and not gc.isenabled()
    assert not gc.isenabled()  # and ends held in its turn


FINALIZER = """
import gc
from airctl.io import gc_pause
from airctl.io.gc_pause import gc_paused
gc_pause.process_ends_with_command()
with gc_paused(hold=True):
    pass
class Cycle:
    def __del__(self):
        with gc_paused():  # a finalizer the owed collection runs, pausing in its turn
            print("finalized")
c = Cycle()
c.me = c
del c
with gc_paused(hold=True):
    print("compiling")
"""


def test_a_finalizer_run_by_the_owed_collection_may_pause() -> None:
    import subprocess
    import sys

    from tests.conftest import REPO

    # in a fresh process with a time limit: a collection run under the pause's lock would wait forever
    proc = subprocess.run([sys.executable, "-c", FINALIZER], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0 and proc.stdout.split() == ["finalized", "compiling"], proc.stderr


def test_hold_is_a_plain_pause_in_a_process_that_goes_on(monkeypatch) -> None:
    from airctl.io import gc_pause

    monkeypatch.setattr(gc_pause, "_ends_with_command", False)  # a test, a library caller
    with gc_paused(hold=True):
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_not_asked_for_leaves_the_collector_alone() -> None:
    with gc_paused(False):
        assert gc.isenabled()
    assert gc.isenabled()


def test_only_graph_files_make_a_command_that_pauses_for_its_whole_run(tmp_path) -> None:
    from airctl.io.gc_pause import graph_files_only

    graph, dump, script = tmp_path / "g.json", tmp_path / "g.pbtxt", tmp_path / "model.py"
    for path in (graph, dump, script):
        path.write_text("x", encoding="utf-8")
    assert graph_files_only(graph, dump) and graph_files_only(str(graph))
    assert not graph_files_only(graph, None)  # one ledger's two stages, or the current run
    assert not graph_files_only(graph, script)  # a model script is compiled
    assert not graph_files_only(tmp_path)  # a ledger folder, or any folder
    assert not graph_files_only(tmp_path / "latest")  # a run id
    assert not graph_files_only()
