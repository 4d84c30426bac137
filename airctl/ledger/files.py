"""Write the ledger's files off the compile thread, compressed.

A stage snapshot is serialised (JSON), gzip-compressed and written while TorchAir goes on
compiling: :class:`BackgroundFiles` runs one worker thread fed by a queue, in order. zlib and
file writes release the GIL, so on a machine with a spare core most of the cost leaves the
compile's critical path; the JSON encoding itself still shares the interpreter.

The compile thread hands over only immutable data (a :class:`~airctl.graph.model.Graph` the
capture no longer changes, text already generated). :meth:`BackgroundFiles.drain` waits until
everything handed over is on disk and raises the first error a write met; the ledger writer
drains before it finishes a run and before anything reads a snapshot back. A write that fails (a
full disk) leaves no half-written file; :meth:`BackgroundFiles.take_failures` tells the writer
which files are missing, so the index never lists them.

>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as tmp:
...     files = BackgroundFiles()
...     files.submit(Path(tmp) / "a.txt.gz", lambda: "hello")
...     files.drain()
...     from airctl.io.compressed import read_bytes
...     read_bytes(Path(tmp) / "a.txt.gz")
b'hello'
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

from airctl.io.compressed import GZ, LEVEL, gzip_bytes

Produce = Callable[[], str | bytes]
IDLE_S = 1.0  # the worker thread ends after this long without work


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` for the block to write; renamed over ``path`` when the block
    ends, removed when it fails (a full disk, Ctrl-C): a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_file(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` (gzip-compressed when the name ends in ``.gz``), via :func:`replacing`."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if path.suffix == GZ:
        raw = gzip_bytes(raw)
    with replacing(path) as tmp:
        tmp.write_bytes(raw)


def copy_compressed(source: Path, path: Path, chunk: int = 1 << 20) -> None:
    """``source`` gzip-compressed into ``path``, streamed (memory stays at one chunk, whatever the size: a 1 GB
    log is never read whole), via :func:`replacing`."""
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, 31)
    with replacing(path) as tmp:
        with open(source, "rb") as src, open(tmp, "wb") as dst:
            while block := src.read(chunk):
                dst.write(packer.compress(block))
            dst.write(packer.flush())


class BackgroundFiles:
    """One worker thread writing files in the order they were submitted; it ends when idle
    (:data:`IDLE_S`) and starts again on the next submission."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Callable[[], None], Path | None]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._failures: list[tuple[Path | None, BaseException]] = []  # (the file a job wrote, its error)
        self._lock = threading.Lock()

    def submit(self, path: Path, produce: Produce) -> None:
        """Write ``produce()`` to ``path`` soon (``produce`` runs on the worker thread)."""
        self.call(lambda: write_file(path, produce()), path)

    def call(self, job: Callable[[], None], path: Path | None = None) -> None:
        """Run ``job()`` on the worker thread, after everything submitted before it; ``path``: the
        file it writes (named in :meth:`take_failures` when it fails)."""
        with self._lock:
            self._queue.put((job, path))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="airctl-ledger-files", daemon=True)
                self._thread.start()

    def _work(self) -> None:
        while True:
            try:
                job, path = self._queue.get(timeout=IDLE_S)
            except queue.Empty:
                with self._lock:  # submit() puts under the lock: nothing can slip in unseen
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            try:
                job()
            except BaseException as e:  # noqa: BLE001 - reported by drain() on the compile thread
                with self._lock:
                    self._failures.append((path, e))
            finally:
                job = None  # type: ignore[assignment]  # not kept alive (with what it holds) while idle
                self._queue.task_done()

    def wait(self) -> None:
        """Wait until every submitted job has run."""
        self._queue.join()

    def failed(self) -> bool:
        """Whether a job has failed since the last :meth:`take_failures` (without waiting)."""
        return bool(self._failures)

    def take_failures(self) -> list[tuple[Path | None, BaseException]]:
        """The jobs that failed so far, as (file, error), oldest first; forgotten once taken."""
        with self._lock:
            failures, self._failures = self._failures, []
        return failures

    def drain(self) -> None:
        """Wait until every submitted file is written; raise the first error a write met."""
        self.wait()
        failures = self.take_failures()
        if failures:
            raise failures[0][1]
