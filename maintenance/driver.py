"""Who drives drains: a `DrainDriver` thread that steps every running or paused drain about once a second
(`maintenance.drain.drain_step`), woken at once when a drain starts or resumes.

The state is in the database and every step is idempotent, so where the thread runs does not matter and a
restart loses nothing: the embedded default runs one in the web process (ASGI lifespan, hence also
`manage.py demo`); with Celery, every worker runs one (`maintenance.tasks`, on worker_ready) and
`manage.py drain_driver` runs one as a process of its own. Several drivers are safe: each step first takes
the drain's lease (DRADASH_DRAIN_LEASE_SECONDS), and each pod's eviction is claimed by one conditional
UPDATE. A driver that dies holds its lease until it runs out; the next driver then resumes the drain and
re-checks an eviction the dead one left in flight. The work is I/O (HTTP to the API server, the
database), so a thread does not starve the web process.

The same loop retries, every `leftover_every` seconds, the rollback of rules a failed enforce left in the
cluster (`maintenance.leftovers`): it is the one periodic loop every deployment runs, and what it retries
is as idempotent as a drain step (each retry claims the maintenance's version first).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable

from django.db import close_old_connections

from maintenance import wake

log = logging.getLogger(__name__)

STEP_EVERY_SECONDS = 1.0


def driver_token() -> str:
    return f"{socket.gethostname()[:30]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class DrainDriver:
    def __init__(
        self,
        *,
        every: float = STEP_EVERY_SECONDS,
        token: str | None = None,
        leftover_every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from maintenance.leftovers import RETRY_EVERY_SECONDS

        self.every = every
        self.token = token or driver_token()
        self.leftover_every = RETRY_EVERY_SECONDS if leftover_every is None else leftover_every
        self._clock = clock
        self._leftovers_at: float | None = None  # when this driver last retried them
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> DrainDriver:
        self._thread = threading.Thread(target=self._run, name=f"drain-driver-{self.token}", daemon=True)
        self._thread.start()
        return self

    def wake(self) -> None:
        self._wake.set()

    def stop(self, *, release: bool = True, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout)
        if release:
            from maintenance.drain import release_leases

            try:
                release_leases(self.token)
            finally:
                close_old_connections()

    def step_all(self) -> int:
        """One step of every active drain; the number it held."""
        from maintenance.drain import active_drains, drain_step

        held = 0
        for maintenance_id in active_drains():
            if self._stop.is_set():
                break
            try:
                held += int(drain_step(maintenance_id, driver=self.token).held)
            except Exception:  # one broken drain must not stop the others; the next step retries
                log.exception("drain step of maintenance %s failed", maintenance_id)
        return held

    def retry_leftovers(self) -> int:
        """Retry the rollback of leftover rules if `leftover_every` has passed; the number removed."""
        from maintenance.leftovers import leftovers_retry_all

        now = self._clock()
        if self._leftovers_at is not None and now - self._leftovers_at < self.leftover_every:
            return 0
        self._leftovers_at = now
        return leftovers_retry_all()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step_all()
            except Exception:
                log.exception("drain driver step failed")
            try:
                self.retry_leftovers()
            except Exception:
                log.exception("retrying the leftover rules failed")
            finally:
                close_old_connections()
            self._wake.wait(self.every)
            self._wake.clear()


_driver: DrainDriver | None = None
_lock = threading.Lock()


def start_drain_driver(*, every: float = STEP_EVERY_SECONDS) -> DrainDriver:
    """This process's driver (started once)."""
    global _driver
    with _lock:
        if _driver is None:
            _driver = DrainDriver(every=every).start()
            wake.register(_driver.wake)
        return _driver


def stop_drain_driver() -> None:
    global _driver
    with _lock:
        driver, _driver = _driver, None
    if driver is not None:
        wake.unregister(driver.wake)
        driver.stop()
