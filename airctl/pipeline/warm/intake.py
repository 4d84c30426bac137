"""A request arriving at the fork server, read as it comes: one slow client never holds the loop.

The server (:mod:`airctl.pipeline.warm.server`) once read each request whole, blocking, as soon as
its client connected: a same-user client that sent its request a byte at a time held every other
command for a minute and more. Each connection is now a :class:`Pending` in the server's selector:
:meth:`Pending.feed` takes what has arrived (the 4-byte length with the three descriptors, then
the JSON body) without blocking, and the server drops a connection whose request is not whole
within :data:`READ_S` of its connecting, while serving the others in between.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import time
from typing import Any

MAX_REQUEST = 16 << 20  # an environment and a folder's path; anything larger is not a client of ours
READ_S = 10.0  # a client must have sent its whole request this long after connecting


class Pending:
    """A connection whose request is still arriving (non-blocking until it is whole)."""

    def __init__(self, conn: socket.socket, read_s: float = READ_S) -> None:
        self.conn = conn
        self.deadline = time.monotonic() + read_s
        self.head = b""
        self.fds: list[int] = []
        self.body = bytearray()
        self.size: int | None = None
        conn.setblocking(False)

    def feed(self) -> dict[str, Any] | None:
        """Read what has arrived: the request once whole (the connection blocking again), None while
        more is to come; ValueError when it can never be one (gone, too large, not a request)."""
        try:
            if self.size is None:
                data, fds, _flags, _addr = socket.recv_fds(self.conn, 4 - len(self.head), 3)
                self.fds += fds
                if not data:
                    raise ValueError("the client went away before its request")
                self.head += data
                if len(self.head) == 4:
                    self.size = struct.unpack("!I", self.head)[0]
                    if self.size > MAX_REQUEST:
                        raise ValueError("a request larger than any of ours")
                if self.size != 0:
                    return None
            elif len(self.body) < self.size:
                chunk = self.conn.recv(min(self.size - len(self.body), 1 << 16))
                if not chunk:
                    raise ValueError("the client went away mid-request")
                self.body += chunk
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as e:
            raise ValueError(str(e)) from None
        if self.size is None or len(self.body) < self.size:
            return None
        try:
            request = json.loads(bytes(self.body))
        except (ValueError, RecursionError):
            raise ValueError("not JSON") from None
        if (not isinstance(request, dict) or not isinstance(request.get("argv"), list)
                or not isinstance(request.get("env"), dict) or not isinstance(request.get("cwd"), str)):
            raise ValueError("not a request")
        self.conn.setblocking(True)
        return request

    def close(self) -> None:
        """Give up on it: its descriptors and connection closed."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []
        with contextlib.suppress(OSError):
            self.conn.close()
