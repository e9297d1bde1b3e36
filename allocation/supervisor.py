"""The embedded what-if worker: `manage.py whatif_worker` as a child process of the web server.

A what-if is CPU-bound pure Python. In a thread of the web process it holds the GIL and every request
waits behind it (bench/bench_whatif_isolation.py measures both layouts); in its own process it cannot
starve request handling. The child

- is started with the server (ASGI lifespan, hence also `manage.py demo`) and restarted when it dies;
- dies with this process: it reads its stdin, a pipe only this process holds, and exits at end of
  file — which the kernel delivers even when this process is killed with SIGKILL;
- is woken through that pipe when a run is created (and polls the database in case it missed one);
- writes its broadcasts to a second pipe; this process sends them on its own channel layer, because
  the in-memory layer the websockets are on cannot cross processes.

This module imports nothing of the services (they import it to wake the worker), so there is no cycle.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connections

from dradash.realtime import register_server_loop, send_now

log = logging.getLogger(__name__)

MIN_RESTART_DELAY = 1.0
MAX_RESTART_DELAY = 30.0
# A child that lived this long crashed for a new reason: restart it quickly again.
HEALTHY_AFTER = 60.0


def database_url(db: dict[str, Any] | None = None) -> str:
    """DATABASE_URL of the database this process uses right now (a test database too), for the child."""
    db = db if db is not None else connections["default"].settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        name = str(db["NAME"])
        if not name or name == ":memory:" or name.startswith("file:"):
            raise ImproperlyConfigured(
                "the embedded what-if worker runs in its own process and needs a database file it can "
                f"open; DATABASE_URL points at an in-memory SQLite database ({db['NAME']!r})"
            )
        return f"sqlite:///{Path(name).resolve()}"
    if db["ENGINE"].endswith("postgresql"):
        user = quote(str(db.get("USER") or ""), safe="")
        password = quote(str(db.get("PASSWORD") or ""), safe="")
        auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
        port = f":{db['PORT']}" if db.get("PORT") else ""
        return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}{port}/{quote(str(db['NAME']), safe='')}"
    raise ImproperlyConfigured(
        f"the embedded what-if worker does not know the database engine {db['ENGINE']}"
    )


class PipeRelay:
    """The child's end of the broadcast pipe: one JSON line per group send (`realtime.forward_sends`)."""

    def __init__(self, fd: int) -> None:
        self._file = os.fdopen(fd, "wb", buffering=0)
        self._lock = threading.Lock()

    def __call__(self, group: str, event: dict[str, Any]) -> None:
        line = json.dumps({"group": group, "event": event}, default=str).encode() + b"\n"
        with self._lock:
            self._file.write(line)


class EmbeddedWorker:
    """Supervises one `manage.py whatif_worker --embedded` child: start, wake, restart, stop."""

    def __init__(self, *, threads: int, min_delay: float = MIN_RESTART_DELAY) -> None:
        self.threads = threads
        self.min_delay = min_delay
        #: how many times a child died and was replaced
        self.restarts = 0
        self._stopping = threading.Event()
        self._started = threading.Event()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def start(self, *, wait: float = 10.0) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stopping.clear()
            self._started.clear()
            self._thread = threading.Thread(target=self._supervise, name="whatif-supervisor", daemon=True)
            self._thread.start()
        if not self._started.wait(wait):
            log.warning("the embedded what-if worker did not start within %.0f s", wait)

    def wake(self) -> None:
        """A run was queued: have the child look now instead of at its next poll."""
        process = self._process
        if process is None or process.stdin is None:
            return
        try:
            with self._lock:
                process.stdin.write(b"\n")
                process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # it is being restarted; it polls the database when it is back

    def stop(self, *, timeout: float = 10.0) -> None:
        """Stop the child (it ends its runs as failed) and the supervision; waits up to `timeout`."""
        self._stopping.set()
        process = self._process
        if process is not None:
            _close(process.stdin)  # end of file: the child stops
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                log.warning(
                    "the what-if worker (pid %s) did not stop within %.0f s; killing it", process.pid, timeout
                )
                process.kill()
                process.wait()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _spawn(self) -> tuple[subprocess.Popen[bytes], threading.Thread]:
        read_fd, write_fd = os.pipe()
        env = {
            **os.environ,
            # settings.SETTINGS_MODULE is None under override_settings; the environment says how Django
            # was configured in this process.
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE")
            or settings.SETTINGS_MODULE
            or "dradash.settings",
            "DATABASE_URL": database_url(),
            "DRADASH_EMBEDDED_WORKER": "false",
        }
        command = [
            sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "whatif_worker", "--embedded",
            "--relay-fd", str(write_fd), "--threads", str(self.threads),
        ]  # fmt: skip
        try:
            process = subprocess.Popen(
                command, cwd=settings.BASE_DIR, env=env, stdin=subprocess.PIPE, pass_fds=(write_fd,)
            )
        finally:
            os.close(write_fd)  # the child holds it now; its exit ends the relay with end of file
        relay = threading.Thread(
            target=_relay, args=(os.fdopen(read_fd, "rb"),), name="whatif-relay", daemon=True
        )
        relay.start()
        return process, relay

    def _supervise(self) -> None:
        delay = self.min_delay
        while not self._stopping.is_set():
            started = time.monotonic()
            try:
                process, relay = self._spawn()
            except Exception:
                log.exception("could not start the what-if worker; trying again in %.0f s", delay)
                self._started.set()
                self._stopping.wait(delay)
                delay = min(delay * 2, MAX_RESTART_DELAY)
                continue
            self._process = process
            self._started.set()
            code = process.wait()
            relay.join(5)
            if self._stopping.is_set():
                return
            delay = self.min_delay if time.monotonic() - started > HEALTHY_AFTER else delay
            log.warning("the what-if worker (pid %s) exited with %s; starting a new one in %.0f s",
                        process.pid, code, delay)  # fmt: skip
            self.restarts += 1
            self._stopping.wait(delay)
            delay = min(delay * 2, MAX_RESTART_DELAY)


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError):
            stream.close()


def _relay(stream: IO[bytes]) -> None:
    """Send every broadcast the child wrote on this process's channel layer, until the child is gone."""
    with stream:
        for line in stream:
            try:
                message = json.loads(line)
                send_now(str(message["group"]), dict(message["event"]))
            except Exception:
                log.warning("could not relay a what-if broadcast", exc_info=True)


_worker: EmbeddedWorker | None = None
_worker_lock = threading.Lock()


def start_embedded_worker(*, loop: asyncio.AbstractEventLoop | None = None) -> EmbeddedWorker:
    """Start the embedded worker of this process unless it runs (idempotent).

    `loop`: the server's event loop, which relayed broadcasts are scheduled onto (the in-memory
    channel layer is not thread-safe); without it, the first websocket consumer registers it.
    """
    global _worker
    if loop is not None:
        register_server_loop(loop)
    with _worker_lock:
        if _worker is None:
            _worker = EmbeddedWorker(threads=settings.DRADASH_WHATIF_WORKER_THREADS)
        worker = _worker
    worker.start()
    return worker


def stop_embedded_worker(*, timeout: float = 10.0) -> None:
    global _worker
    with _worker_lock:
        worker, _worker = _worker, None
    if worker is not None:
        worker.stop(timeout=timeout)


def embedded_worker() -> EmbeddedWorker | None:
    return _worker


def wake_embedded_worker() -> None:
    worker = _worker
    if worker is not None:
        worker.wake()
