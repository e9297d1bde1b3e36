"""Infrastructure faults for the tests, made without touching the shared servers.

`TcpCut` is a TCP forwarder on a free loopback port in front of a real server (PostgreSQL, Redis, the
simcluster): point the product at it, then `cut()` it — every open connection is closed and new ones are
refused, as when the server went away — or `freeze()` it — connections stay open but nothing passes, as
when the server hangs or the network drops packets — and `restore()` it. `database_through(cut)` points this process's
Django connections at such a forwarder for the length of a `with`.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any


class TcpCut:
    """A loopback TCP forwarder to (host, port) that can be cut and restored."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._cut = False
        self._frozen = False
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name=f"tcpcut-{self.port}", daemon=True)
        self._thread.start()

    @property
    def is_cut(self) -> bool:
        return self._cut

    def cut(self) -> None:
        """Close every forwarded connection; refuse new ones (closed as soon as accepted)."""
        with self._lock:
            self._cut = True
            sockets, self._open = self._open, set()
        for sock in sockets:
            _close(sock)

    def freeze(self) -> None:
        """Pass nothing more either way, closing nothing: what is sent waits, unanswered."""
        self._frozen = True

    def restore(self) -> None:
        with self._lock:
            self._cut = False
            self._frozen = False

    def close(self) -> None:
        self.cut()
        self._closed = True
        _close(self._listener)
        self._thread.join(timeout=5)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._cut:
                _close(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            upstream.settimeout(None)
            with self._lock:
                if self._cut:
                    _close(client)
                    _close(upstream)
                    continue
                self._open.update((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        peer = {a: b, b: a}
        with selectors.DefaultSelector() as sel:
            sel.register(a, selectors.EVENT_READ)
            sel.register(b, selectors.EVENT_READ)
            try:
                while True:
                    if self._frozen:
                        time.sleep(0.05)
                        if a not in self._open:
                            return
                        continue
                    for key, _ in sel.select(timeout=0.5):
                        sock: Any = key.fileobj
                        data = sock.recv(65536)
                        if not data:
                            raise OSError("closed")
                        peer[sock].sendall(data)
                    if a not in self._open:
                        return
            except (OSError, ValueError):
                pass
            finally:
                with self._lock:
                    self._open.discard(a)
                    self._open.discard(b)
                _close(a)
                _close(b)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


@contextlib.contextmanager
def database_through_cut() -> Iterator[TcpCut]:
    """Every Django connection of this process (all threads) goes to PostgreSQL through a `TcpCut` for
    the length of the `with`. PostgreSQL only: SQLite is a file, there is no server to lose."""
    from django.db import connections

    conn = connections["default"]
    if conn.vendor != "postgresql":
        import pytest

        pytest.skip("a database server outage needs PostgreSQL (DATABASE_URL=postgres://…)")
    settings = conn.settings_dict  # the one dict every thread's connection is made from
    old_host, old_port = settings["HOST"], settings["PORT"]
    proxy = TcpCut(old_host or "127.0.0.1", int(old_port or 5432))
    conn.close()
    settings["HOST"], settings["PORT"] = "127.0.0.1", str(proxy.port)
    try:
        yield proxy
    finally:
        settings["HOST"], settings["PORT"] = old_host, old_port
        proxy.close()
        conn.close()
