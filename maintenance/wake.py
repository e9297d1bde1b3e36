"""Waking the drain drivers when a drain starts or resumes, so it is stepped now rather than within a
second. The drivers (maintenance.driver) register here; this module imports neither them nor the drain
(so there is no cycle)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings

log = logging.getLogger(__name__)

DRAIN_STEP_TASK = "maintenance.drain_step"
_wakers: list[Callable[[], None]] = []


def register(waker: Callable[[], None]) -> None:
    _wakers.append(waker)


def unregister(waker: Callable[[], None]) -> None:
    if waker in _wakers:
        _wakers.remove(waker)


def wake_drivers(maintenance_id: str) -> None:
    """This process's driver, and a Celery worker's when a broker is configured."""
    for waker in list(_wakers):
        waker()
    if settings.CELERY_BROKER_URL and not settings.DRADASH_EMBEDDED_WORKER:
        try:
            from dradash.celery import app

            app.send_task(DRAIN_STEP_TASK, args=[maintenance_id])
        except Exception:  # the broker is down: the drivers' own loop steps it within a second anyway
            log.warning("could not queue a drain step for %s", maintenance_id, exc_info=True)
