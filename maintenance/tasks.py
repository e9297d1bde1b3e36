"""Celery tasks: thin. Every worker also runs a drain driver while it lives (maintenance.driver), so a
drain resumes when a worker (re)starts; the task steps one drain at once when it starts or resumes."""

from __future__ import annotations

from typing import Any

from celery.signals import worker_ready, worker_shutdown

from dradash.celery import app
from maintenance.drain import drain_step
from maintenance.driver import driver_token, start_drain_driver, stop_drain_driver
from maintenance.wake import DRAIN_STEP_TASK


@app.task(name=DRAIN_STEP_TASK, ignore_result=True)
def step_drain(maintenance_id: str) -> None:
    drain_step(maintenance_id, driver=driver_token())


@worker_ready.connect
def _drive_drains_while_the_worker_lives(**kwargs: Any) -> None:
    start_drain_driver()


@worker_shutdown.connect
def _release_the_drains_when_the_worker_stops(**kwargs: Any) -> None:
    """A worker stopping cleanly hands its drains back at once (no waiting for its leases to run out)."""
    stop_drain_driver()
