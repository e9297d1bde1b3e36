"""The what-if worker loop: take pending runs from the database and run each in a thread.

`manage.py whatif_worker` runs it — by default as a child process of the web server
(`allocation.supervisor`), or on its own on any host that reaches the database. Celery workers
(Redis) receive runs through their broker instead and only borrow the periodic reaper from here.
Reaping every stale run of the table happens here, on a timer, and nowhere else; so does keeping a
worker's snapshot warm (`start_warmer`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connection

from allocation.services import whatif_pending_ids, whatif_reap_stale, whatif_run_execute, whatif_warm

log = logging.getLogger(__name__)

REAP_EVERY_SECONDS = 15.0
# Runs are woken for at once (the supervisor writes to the worker's stdin); polling covers a missed
# wake-up and runs queued by other web processes.
POLL_SECONDS = 1.0


class Worker:
    """Runs up to `threads` what-if runs at once, oldest pending first.

    Threads, not processes: a small run is not stuck behind two big ones (they share the CPU), and
    the whole worker is one process the web server can supervise. `stop` ends the loop; runs still
    going are left to the caller (`in_flight`).
    """

    def __init__(
        self,
        *,
        threads: int,
        poll_seconds: float = POLL_SECONDS,
        reap_every: float = REAP_EVERY_SECONDS,
        execute: Callable[[str], None] | None = None,
    ) -> None:
        self.threads = threads
        self.poll_seconds = poll_seconds
        self.reap_every = reap_every
        self.execute = execute or (lambda run_id: whatif_run_execute(run_id=run_id))
        self.wake = threading.Event()
        self.stop = threading.Event()
        self._running: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def in_flight(self) -> list[str]:
        with self._lock:
            return [run_id for run_id, thread in self._running.items() if thread.is_alive()]

    def run(self) -> None:
        next_reap = 0.0
        while not self.stop.is_set():
            if time.monotonic() >= next_reap:
                _logged(whatif_reap_stale)
                next_reap = time.monotonic() + self.reap_every
            busy = self.in_flight()
            free = self.threads - len(busy)
            if free > 0:
                for run_id in _logged(whatif_pending_ids, limit=free, skip=busy) or []:
                    self._start(run_id)
            if self.wake.wait(self.poll_seconds):
                self.wake.clear()
        connection.close()

    def _start(self, run_id: str) -> None:
        thread = threading.Thread(target=self._execute, args=(run_id,), name=f"whatif-{run_id}", daemon=True)
        with self._lock:
            self._running = {k: t for k, t in self._running.items() if t.is_alive()}
            self._running[run_id] = thread
        thread.start()

    def _execute(self, run_id: str) -> None:
        try:
            self.execute(run_id)
        except Exception:
            log.exception("what-if run %s crashed its thread", run_id)
        finally:
            connection.close()
            self.wake.set()  # a slot is free


def _logged(fn: Callable[..., Any], **kwargs: Any) -> Any:
    """Call `fn`; a database hiccup is logged and the loop goes on (the next round tries again)."""
    try:
        return fn(**kwargs)
    except Exception:
        log.warning("what-if worker: %s failed", getattr(fn, "__name__", fn), exc_info=True)
        connection.close()
        return None


_reaper: threading.Thread | None = None
_reaper_lock = threading.Lock()


def start_reaper(*, every: float = REAP_EVERY_SECONDS) -> None:
    """Reap stale runs every `every` seconds in a daemon thread of this process (idempotent): for
    Celery workers, so a run whose worker died is marked failed even if nobody looks at it."""
    global _reaper
    with _reaper_lock:
        if _reaper is not None and _reaper.is_alive():
            return
        _reaper = threading.Thread(target=_reap_forever, args=(every,), name="whatif-reaper", daemon=True)
        _reaper.start()


def _reap_forever(every: float) -> None:
    while True:
        _logged(whatif_reap_stale)
        connection.close()
        time.sleep(every)


class Warmer(threading.Thread):
    """Keeps this process's snapshot and base view current (`whatif_warm`): at once, then every
    `every` seconds, until `stopped` is set."""

    def __init__(self, every: float) -> None:
        super().__init__(name="whatif-warmer", daemon=True)
        self.every = every
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            started = time.monotonic()
            _logged(whatif_warm)
            connection.close()
            log.debug("what-if worker: snapshot warm in %.2f s", time.monotonic() - started)
            self.stopped.wait(self.every)


_warmer: Warmer | None = None
_warmer_lock = threading.Lock()


def start_warmer(*, every: float) -> Warmer | None:
    """Start this process's `Warmer` (idempotent: the running one is returned; `every` <= 0: none).
    Every worker kind starts it: the embedded worker, and Celery workers, which answer runs and shards."""
    global _warmer
    if every <= 0:
        return None
    with _warmer_lock:
        if _warmer is None or not _warmer.is_alive() or _warmer.stopped.is_set():
            _warmer = Warmer(every)
            _warmer.start()
        return _warmer
