"""Running one what-if run to its end (what every worker calls): every way a run ends is one state and
one message — succeeded, cancelled between steps, out of time or steps inside the allocator's search,
failed once (never once per node) — and the reaper of runs whose worker died."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.utils import timezone

from allocation import services
from allocation.models import RunState, WhatIfRun
from inventory.models import KubeObject
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db(transaction=True)
ONE_GPU_TEMPLATE = {
    "source": "pick",
    "kind": "ResourceClaimTemplate",
    "namespace": "default",
    "name": "one-gpu",
}


def wait_for(run_id: Any, done: Callable[[WhatIfRun], bool], timeout: float = 30.0) -> WhatIfRun:
    """Poll the row until `done` holds (a deadline, not a sleep for timing)."""
    deadline = time.monotonic() + timeout
    while True:
        run = WhatIfRun.objects.get(pk=run_id)
        if done(run):
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} still {run.state} / {run.phase!r} after {timeout} s")
        time.sleep(0.02)


def create(kind: str = "headroom", data: dict[str, Any] | None = None) -> WhatIfRun:
    return services.whatif_run_create(
        kind=kind, input=data or ONE_GPU_TEMPLATE, user=User.objects.get_or_create(username="rune")[0]
    )


@contextmanager
def in_a_thread(run_id: Any) -> Iterator[threading.Thread]:
    """Execute the run in another thread (as a worker would) while the test looks at the row."""

    def execute() -> None:
        from django.db import connection

        try:
            services.whatif_run_execute(run_id=str(run_id))
        finally:
            connection.close()

    thread = threading.Thread(target=execute, daemon=True)
    thread.start()
    yield thread
    thread.join(30)


def hard_claim() -> dict[str, Any]:
    """8 + 9 devices of one class on a node with 16: the search tries every way to pick the 8 first
    (millions of steps, about half a minute) before it can say no."""
    claim = o.claim("hard")
    claim["spec"]["devices"]["requests"] = [
        {"name": "a", "exactly": {"deviceClassName": o.DRIVER, "count": 8}},
        {"name": "b", "exactly": {"deviceClassName": o.DRIVER, "count": 9}},
    ]
    return {"source": "yaml", "yaml": yaml.safe_dump(claim)}


def one_big_node() -> None:
    o.store(o.device_class(), o.node("node-h"), o.gpu_slice("node-h", "A100", count=16))


@pytest.fixture
def endless(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Replace the answer with one that reports progress forever (until stopped by the run machinery)."""
    started = threading.Event()

    def answer(*, kind: str, input: dict[str, Any], context: Any) -> dict[str, Any]:
        for i in itertools.count():
            started.set()
            context.progress("crunching", i % 100, 100)
            started.wait(0.005)
        raise AssertionError("unreachable")

    monkeypatch.setattr(services, "whatif_answer", answer)
    return started


def test_it_answers_and_records_the_inventory_versions_it_answered_about() -> None:
    o.store(*o.small_cluster().values(), versions={"resourceslices": "41", "resourceclaims": "42"})
    run = create()
    services.whatif_run_execute(run_id=str(run.pk))
    run.refresh_from_db()
    assert (run.state, run.percent, run.error, run.result["total"]) == (RunState.SUCCEEDED, 100, "", 3)
    assert run.snapshot_versions == {"resourceslices": "41", "resourceclaims": "42"}


def test_it_cancels_a_running_run_between_steps(endless: threading.Event) -> None:
    o.store(*o.small_cluster().values())
    run = create()
    with in_a_thread(run.pk):
        wait_for(run.pk, lambda r: r.state == RunState.RUNNING and r.phase == "crunching")
        services.whatif_run_cancel(run=run)
        finished = wait_for(run.pk, lambda r: r.is_finished)
    assert (finished.state, finished.error) == (RunState.CANCELLED, "cancelled while running")


def test_it_times_out_a_run_between_steps_at_its_time_limit(
    endless: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = itertools.count(step=7)  # every look at the clock is 7 s later
    monkeypatch.setattr(services, "monotonic", lambda: float(next(ticks)))
    o.store(*o.small_cluster().values())
    run = create()
    services.whatif_run_execute(run_id=str(run.pk))
    run.refresh_from_db()
    assert run.state == RunState.TIMED_OUT
    assert run.error == "stopped after the time limit of 120 s (while crunching)"


def test_it_stops_a_search_at_the_time_limit_inside_the_allocator(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = itertools.count()  # one second per look: only the allocator looks often enough to pass 120
    monkeypatch.setattr(services, "monotonic", lambda: float(next(ticks)))
    one_big_node()
    run = create("feasibility", hard_claim())
    services.whatif_run_execute(run_id=str(run.pk))
    run.refresh_from_db()
    assert (run.state, run.result) == (RunState.TIMED_OUT, None)
    assert run.error == "stopped after the time limit of 120 s (inside the allocator's search)"


def test_it_stops_an_allocation_attempt_that_passes_the_step_budget(settings: Any) -> None:
    settings.DRADASH_WHATIF_MAX_SEARCH_STEPS = 5000
    one_big_node()
    run = create("feasibility", hard_claim())
    assert run.max_search_steps == 5000  # the budget is the run's, whatever worker runs it
    services.whatif_run_execute(run_id=str(run.pk))
    run.refresh_from_db()
    assert run.state == RunState.TIMED_OUT
    assert "more than 5000 search steps (DRADASH_WHATIF_MAX_SEARCH_STEPS)" in run.error


def test_it_fails_with_one_message_when_the_allocator_refuses_the_question() -> None:
    o.store(*o.small_cluster().values())
    picky = o.claim("picky", selector='device.attributes["gpu.example.com"].serial == "x"')  # no such key
    run = create("feasibility", {"source": "yaml", "yaml": yaml.safe_dump(picky)})
    services.whatif_run_execute(run_id=str(run.pk))
    run.refresh_from_db()
    assert (run.state, run.result) == (RunState.FAILED, None)
    assert run.error.startswith("the allocator refused the question: ")
    assert run.error.count("no such key") == 1  # one message for the run, not one per node


def test_it_fails_with_one_message_when_the_subject_left_the_inventory_after_it_was_asked() -> None:
    o.store(*o.small_cluster().values())
    run = create()
    KubeObject.objects.filter(kind="resourceclaimtemplates", name="one-gpu").delete()
    services.whatif_run_execute(run_id=str(run.pk))
    run.refresh_from_db()
    assert (run.state, run.result) == (RunState.FAILED, None)
    assert run.error == "input.name: ResourceClaimTemplate default/one-gpu is no longer in the inventory"


def test_it_keeps_the_heartbeat_of_a_run_busy_in_one_long_step(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def one_long_step(**kwargs: Any) -> dict[str, Any]:
        release.wait(30)  # a step that reports no progress while it works
        return {"done": True}

    monkeypatch.setattr(services, "whatif_answer", one_long_step)
    monkeypatch.setattr(services, "HEARTBEAT_SECONDS", 0.1)
    o.store(*o.small_cluster().values())
    run = create()
    with in_a_thread(run.pk):
        first = wait_for(run.pk, lambda r: r.state == RunState.RUNNING).heartbeat_at
        assert first is not None
        wait_for(run.pk, lambda r: r.heartbeat_at is not None and r.heartbeat_at > first)
        release.set()
        assert wait_for(run.pk, lambda r: r.is_finished).result == {"done": True}


def running(*, started: Any, beat: Any, limit: int = 120) -> WhatIfRun:
    return WhatIfRun.objects.create(
        kind="headroom",
        input={},
        state=RunState.RUNNING,
        time_limit_seconds=limit,
        started_at=started,
        heartbeat_at=beat,
    )


def test_it_reaps_a_run_once_its_heartbeat_is_older_than_thirty_seconds() -> None:
    now = timezone.now()
    run = running(started=now, beat=now)
    assert services.whatif_reap_stale(now=now + timedelta(seconds=10)) == 0
    assert services.whatif_reap_stale(now=now + timedelta(seconds=31)) == 1
    assert WhatIfRun.objects.get(pk=run.pk).state == RunState.FAILED


def test_it_times_out_a_run_stuck_in_one_step_past_its_limit_even_with_a_heartbeat() -> None:
    now = timezone.now()
    later = now + timedelta(seconds=95)
    run = running(started=now, beat=later, limit=60)
    assert services.whatif_reap_stale(now=later) == 1
    assert WhatIfRun.objects.get(pk=run.pk).state == RunState.TIMED_OUT


def test_it_fails_a_pending_run_no_worker_picked_up_within_ten_minutes() -> None:
    run = WhatIfRun.objects.create(kind="headroom", input={}, time_limit_seconds=120)
    assert services.whatif_reap_stale(now=timezone.now() + timedelta(minutes=9)) == 0
    assert services.whatif_reap_stale(now=timezone.now() + timedelta(minutes=11)) == 1
    run.refresh_from_db()
    assert (run.state, run.error) == (RunState.FAILED, "no worker picked this run up within 10 minutes")
