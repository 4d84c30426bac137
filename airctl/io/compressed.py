"""Gzip-compressed files (``<name>.<ext>.gz``): how the ledger stores snapshots, texts and dumps.

A graph snapshot of a 6k-node model is megabytes of repetitive JSON or text that gzip shrinks
about tenfold in milliseconds, so the ledger writes ``NNN-<stage>.json.gz`` (docs/ledger.md) and
every reader goes through :func:`read_bytes`, which inflates a ``.gz`` file and returns any
other file as it is. The format of a compressed file is told by the extension under ``.gz``
(:func:`logical_suffix`). Inflating is bounded (:data:`MAX_INFLATED`): a ledger is untrusted
input, and a small file must not expand into all of memory.

>>> logical_suffix(Path("graphs/1-inference/001-aot-inference.json.gz"))
'.json'
>>> gunzip(gzip_bytes(b"abc"), "x.gz")
b'abc'
"""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from airctl.errors import GraphReadError
from airctl.safe_files import open_regular, read_regular

GZ = ".gz"
LEVEL = 1  # fastest: snapshots are written while the compile waits; level 6 saves ~25% more for 4x the time
MAX_INFLATED = 4 << 30  # bytes one compressed file may expand to
READALL_CHUNK = 4 << 20  # bytes inflated per step when a stream is read to its end


def gzip_bytes(data: bytes | str, level: int = LEVEL) -> bytes:
    """``data`` (text is UTF-8 encoded) as a gzip stream (``gzip`` / ``zcat`` read it)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    c = zlib.compressobj(level, zlib.DEFLATED, 31)  # wbits 31: gzip header and trailer
    return c.compress(raw) + c.flush()


def gunzip(data: bytes, origin: str, limit: int = MAX_INFLATED) -> bytes:
    """The inflated bytes of a gzip stream; a GraphReadError naming ``origin`` when it is corrupt,
    truncated or would exceed ``limit`` bytes."""
    d = zlib.decompressobj(31)
    try:
        out = d.decompress(data, limit)
    except zlib.error as e:
        raise GraphReadError(f"not a valid gzip file ({e})", file=origin,
                             hint="the ledger file is damaged; rerun the command to get a new one") from e
    if d.unconsumed_tail:
        raise GraphReadError(f"compressed file expands to more than {limit} bytes", file=origin)
    if not d.eof:
        raise GraphReadError("truncated gzip file", file=origin,
                             hint="the file was not written completely (the run was interrupted?)")
    return out


def read_bytes(path: Path | str) -> bytes:
    """A file's contents, inflated when its name ends in ``.gz``. OSError passes through; a path that is no
    regular file (a FIFO would block) or holds over :data:`MAX_INFLATED` bytes is a GraphReadError."""
    path = Path(path)
    data = read_regular(path, MAX_INFLATED, error=GraphReadError)
    return gunzip(data, str(path)) if path.suffix == GZ else data


class _CheckedGzip(io.RawIOBase):
    """A gzip file read as a stream: corruption, truncation and more than ``limit`` inflated bytes
    become a GraphReadError naming the file (streaming readers see no other exception)."""

    def __init__(self, path: Path, limit: int) -> None:
        self._raw = open_regular(path, error=GraphReadError)
        self._gz = gzip.GzipFile(fileobj=self._raw, mode="rb")
        self._origin, self._limit = str(path), limit

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        return self._checked(self._gz.readinto, buffer)

    def readall(self) -> bytes:
        """The rest of the file, inflated :data:`READALL_CHUNK` bytes at a time (``RawIOBase.readall``
        would take 8 KiB at a time: a 12 MB snapshot in 1,500 Python-level reads)."""
        chunks = []
        while chunk := self._checked(self._gz.read, READALL_CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)

    def _checked(self, read: Any, arg: Any) -> Any:
        try:
            out = read(arg)
        except (OSError, EOFError, zlib.error) as e:
            truncated = isinstance(e, EOFError)
            raise GraphReadError("truncated gzip file" if truncated else f"not a valid gzip file ({e})",
                                 file=self._origin, hint="the file was not written completely (the run was "
                                 "interrupted?)" if truncated else "the ledger file is damaged") from e
        if self._gz.tell() > self._limit:
            raise GraphReadError(f"compressed file expands to more than {self._limit} bytes", file=self._origin)
        return out

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._gz.seek(offset, whence)

    def tell(self) -> int:
        return self._gz.tell()

    def close(self) -> None:
        self._gz.close()  # leaves the file it was given open
        self._raw.close()
        super().close()


def open_bytes(path: Path | str, limit: int = MAX_INFLATED) -> BinaryIO:
    """A binary stream of a file's contents, inflated as it is read when the name ends in ``.gz``
    (streaming readers: memory stays bounded). OSError passes through; a path that is no regular file
    (a FIFO would block) is a GraphReadError."""
    path = Path(path)
    if path.suffix != GZ:
        return open_regular(path, error=GraphReadError)
    return io.BufferedReader(_CheckedGzip(path, limit))  # type: ignore[return-value]


HEAD = 64 << 10  # bytes of a file read to tell its format


def read_head(path: Path | str, size: int = HEAD) -> str:
    """The first ``size`` bytes of a file (inflated when its name ends in ``.gz``) as text, bytes that are
    not UTF-8 replaced: enough to tell its format, whatever its size. A GraphReadError naming the file when
    it cannot be read or is no regular file (a FIFO never blocks)."""
    try:
        with open_bytes(path) as handle:
            return handle.read(size).decode("utf-8", errors="replace")
    except OSError as e:
        raise GraphReadError(f"cannot read: {e.strerror or e}", file=str(path)) from e


def logical_suffix(path: Path) -> str:
    """The extension that tells the format: ``.json`` for ``x.json.gz`` and for ``x.json``."""
    return Path(path.stem).suffix.lower() if path.suffix.lower() == GZ else path.suffix.lower()


def logical_stem(path: Path) -> str:
    """The name without the format extension(s): ``001-aot`` for ``001-aot.json.gz``."""
    return Path(path.stem).stem if path.suffix.lower() == GZ else path.stem
