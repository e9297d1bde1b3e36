"""The embedded worker: a real Celery worker in a thread of the web (or demo) process.

Used when DRADASH_EMBEDDED_WORKER is true (the default without REDIS_URL): tasks go through the
broker (`memory://` by default) exactly as they would to separate workers, so a run never executes
inside a request and never blocks the server's event loop (libraries.md §5). Started once per
process; `start_embedded_worker()` is idempotent.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from typing import Any

from allocation.whatif_publish import register_server_loop

log = logging.getLogger(__name__)

REAP_EVERY_SECONDS = 15.0
# Threads: a small run is not stuck behind a big one; the allocator is pure Python, so more buys nothing.
CONCURRENCY = 2

_lock = threading.Lock()
_worker: Any = None
_thread: threading.Thread | None = None
_reaper: threading.Thread | None = None
_stop_reaper = threading.Event()


def start_embedded_worker(*, loop: asyncio.AbstractEventLoop | None = None, wait: float = 10.0) -> bool:
    """Start the worker thread (and a reaper of stale runs) unless running; True if started now.

    `loop`: the server's event loop, for progress broadcasts over the in-memory channel layer; pass it
    when calling from the ASGI start-up (without it, the first websocket consumer registers it).
    """
    global _worker, _thread
    if loop is not None:
        register_server_loop(loop)
    with _lock:
        if _thread is not None and _thread.is_alive():
            return False
        from celery.worker import WorkController

        from dradash.celery import app

        app.finalize()
        app.set_current()
        import allocation.tasks  # noqa: F401  (register the task even if autodiscovery has not run)

        ready = threading.Event()
        worker = WorkController(
            app=app,
            pool_cls="threads",
            concurrency=CONCURRENCY,
            hostname=f"embedded-{os.getpid()}@{socket.gethostname()}",
            without_heartbeat=True,
            without_mingle=True,
            without_gossip=True,
            ready_callback=lambda consumer: ready.set(),
            loglevel="WARNING",
        )
        thread = threading.Thread(target=_run, args=(worker,), name="dradash-embedded-worker", daemon=True)
        _worker, _thread = worker, thread
        thread.start()
    start_reaper()
    if not ready.wait(wait):
        log.warning("embedded Celery worker not ready after %.0f s", wait)
    if str(app.conf.broker_url).startswith("memory://"):
        threading.Thread(target=_requeue, name="dradash-whatif-requeue", daemon=True).start()
    return True


def _requeue() -> None:
    # The in-memory queue died with the previous process; its pending runs are only in the database.
    from django.db import connection

    from allocation.services import whatif_requeue_pending

    try:
        whatif_requeue_pending()
    except Exception:
        log.warning("re-queueing pending what-if runs failed", exc_info=True)
    finally:
        connection.close()


def start_reaper() -> None:
    """Reap stale runs every REAP_EVERY_SECONDS in a daemon thread of this process (idempotent)."""
    global _reaper
    with _lock:
        if _reaper is not None and _reaper.is_alive():
            return
        _stop_reaper.clear()
        _reaper = threading.Thread(target=_reap_forever, name="dradash-whatif-reaper", daemon=True)
        _reaper.start()


def _run(worker: Any) -> None:
    try:
        worker.start()
    except Exception:
        log.exception("embedded Celery worker stopped")


def _reap_forever() -> None:
    from django.db import connection

    from allocation.services import whatif_reap_stale

    while True:
        try:
            whatif_reap_stale()
        except Exception:
            log.warning("reaping stale what-if runs failed", exc_info=True)
        finally:
            connection.close()
        if _stop_reaper.wait(REAP_EVERY_SECONDS):
            return


def embedded_worker_running() -> bool:
    return _thread is not None and _thread.is_alive()


def stop_embedded_worker(*, timeout: float = 10.0) -> None:
    """Stop the worker thread (tests, shutdown); waits for running tasks up to `timeout`."""
    global _worker, _thread, _reaper
    from celery.worker import state

    with _lock:
        worker, thread, reaper = _worker, _thread, _reaper
        _worker = _thread = _reaper = None
    _stop_reaper.set()
    if worker is None or thread is None:
        return
    # The consumer loop polls this flag; worker.stop() alone can leave it blocked on the broker.
    state.should_terminate = 0
    try:
        worker.stop(in_sighandler=False)
        thread.join(timeout)
    finally:
        state.should_terminate = None
    if reaper is not None:
        reaper.join(timeout)
    if thread.is_alive():
        log.warning("embedded Celery worker did not stop within %.0f s", timeout)
