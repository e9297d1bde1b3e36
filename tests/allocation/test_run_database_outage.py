"""A what-if run whose database goes away for a moment (a PostgreSQL restart, a failover, a network cut)
while it works: its heartbeat goes on once the database is back, so a live worker busy in one long step
is not reaped as "stopped responding"; and a run the outage did fail says the database did not answer,
not "internal error: OperationalError". Over a real PostgreSQL behind a TCP cut (tests/faults.py)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from allocation import services
from allocation.models import RunState, WhatIfRun
from tests.allocation import whatif_objects as o
from tests.allocation.test_run_execution import create, in_a_thread, wait_for
from tests.faults import database_through_cut

pytestmark = pytest.mark.django_db(transaction=True)


def eventually(what: str, done: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.02)


class Step:
    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, **kwargs: Any) -> dict[str, Any]:
        self.entered.set()
        self.release.wait(60)
        return {"done": True}


@pytest.fixture
def one_long_step(monkeypatch: pytest.MonkeyPatch) -> Step:
    """The run's answer is one step that reports no progress until `release` is set."""
    step = Step()
    monkeypatch.setattr(services, "whatif_answer", step)
    monkeypatch.setattr(services, "HEARTBEAT_SECONDS", 0.1)
    return step


def beat_failed(caplog: pytest.LogCaptureFixture) -> bool:
    return any("heartbeat of what-if run" in r.getMessage() for r in caplog.records)


def test_a_run_busy_in_one_long_step_keeps_its_heartbeat_after_the_database_was_away(
    one_long_step: Step, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="allocation.services")
    o.store(*o.small_cluster().values())
    with database_through_cut() as cut:
        run = create()
        with in_a_thread(run.pk):
            assert one_long_step.entered.wait(30), "the run did not reach its step"
            cut.cut()
            eventually("a heartbeat met the cut", lambda: beat_failed(caplog))
            cut.restore()
            connection.close()  # this thread's connection went with the cut
            back = WhatIfRun.objects.get(pk=run.pk).heartbeat_at
            assert back is not None
            # the worker is alive: its heartbeat goes on, so the reaper leaves the run alone
            wait_for(run.pk, lambda r: r.heartbeat_at is not None and r.heartbeat_at > back)
            assert services.whatif_reap_stale() == 0
            one_long_step.release.set()
            wait_for(run.pk, lambda r: r.is_finished)


def test_a_run_the_database_failed_says_the_database_did_not_answer(
    one_long_step: Step,
) -> None:
    o.store(*o.small_cluster().values())
    with database_through_cut() as cut:
        run = create()
        with in_a_thread(run.pk):
            assert one_long_step.entered.wait(30), "the run did not reach its step"
            cut.cut()  # the run's own connection is lost while its step works
            cut.restore()
            connection.close()
            one_long_step.release.set()
            run = wait_for(run.pk, lambda r: r.is_finished)
    assert run.state == RunState.FAILED
    assert run.error.startswith("the database is unavailable (it did not answer: "), run.error
    assert "run the what-if again" in run.error
    assert "internal error" not in run.error
