"""What-if runs end to end through the embedded worker (a real Celery worker thread), the REST API,
cancel, the time limit and reaping of runs whose worker died."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from allocation import services
from allocation.models import RunState, WhatIfRun
from allocation.worker import start_embedded_worker, stop_embedded_worker
from tests.allocation import whatif_objects as o
from tests.allocation.whatif_objects import _migrated_sqlite_file, shared_db  # noqa: F401  (fixtures)

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


@pytest.fixture
def worker(shared_db: str) -> Iterator[None]:  # noqa: F811
    start_embedded_worker()
    yield
    stop_embedded_worker()


@pytest.fixture
def viewer() -> User:
    return User.objects.create_user("vera", password="pw-vera-123")


@pytest.fixture
def api(viewer: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(viewer)
    return client


def test_it_runs_a_headroom_question_in_the_worker_and_serves_the_answer(
    worker: None, api: APIClient
) -> None:
    o.store(*o.small_cluster().values(), versions={"resourceslices": "41", "resourceclaims": "42"})
    created = api.post("/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json")
    assert created.status_code == 202, created.content
    run_id = created.json()["id"]
    assert created.json()["page_url"] == f"/whatif/{run_id}/"
    wait_for(run_id, lambda r: r.is_finished)
    body = api.get(f"/api/whatif/runs/{run_id}/").json()
    assert (body["state"], body["percent"], body["error"]) == ("succeeded", 100, "")
    assert body["result"]["total"] == 3
    assert body["snapshot_versions"] == {"resourceslices": "41", "resourceclaims": "42"}
    assert body["created_by"] == "vera"


def test_it_never_runs_a_what_if_inside_the_request(api: APIClient) -> None:
    o.store(*o.small_cluster().values())
    created = api.post("/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json")
    assert created.status_code == 202
    assert created.json()["state"] == "pending"  # no worker in this test: it stays queued
    assert WhatIfRun.objects.get(pk=created.json()["id"]).state == RunState.PENDING


def test_it_rejects_bad_input_with_a_400_naming_the_field(api: APIClient) -> None:
    bad = api.post(
        "/api/whatif/runs/",
        {
            "kind": "taint_impact",
            "input": {"selector": {"pool": "p"}, "taint": {"key": "k", "effect": "Evict"}},
        },
        format="json",
    )
    assert bad.status_code == 400
    assert [e["field"] for e in bad.json()["errors"]] == ["input.taint.effect"]
    missing = api.post(
        "/api/whatif/runs/",
        {
            "kind": "feasibility",
            "input": {"source": "pick", "kind": "Pod", "namespace": "default", "name": "nope"},
        },
        format="json",
    )
    assert missing.status_code == 400
    assert missing.json()["errors"] == [
        {"field": "input.name", "message": "Pod default/nope is not in the inventory"}
    ]
    assert WhatIfRun.objects.count() == 0


def test_it_requires_login_for_the_api() -> None:
    assert APIClient().get("/api/whatif/runs/").status_code in (401, 403)


def test_it_reports_a_failed_run_with_the_reason(worker: None, api: APIClient) -> None:
    o.store(*o.small_cluster().values())
    created = api.post(
        "/api/whatif/runs/",
        {"kind": "headroom", "input": {"source": "class", "deviceClassName": "no-such-class"}},
        format="json",
    )
    run = wait_for(created.json()["id"], lambda r: r.is_finished)
    assert run.state == RunState.FAILED
    assert run.error == "input.deviceClassName: DeviceClass no-such-class is not in the inventory"


@pytest.fixture
def endless(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Replace the answer with one that reports progress forever (until stopped by the run machinery)."""
    started = threading.Event()

    def answer(*, kind: str, input: dict[str, Any], snapshot: Any, now: Any, progress: Any) -> dict[str, Any]:
        for i in itertools.count():
            started.set()
            progress("crunching", i % 100, 100)
            started.wait(0.005)
        raise AssertionError("unreachable")

    monkeypatch.setattr(services, "whatif_answer", answer)
    return started


def test_it_cancels_a_running_run_between_steps(
    worker: None, api: APIClient, endless: threading.Event
) -> None:
    o.store(*o.small_cluster().values())
    run_id = api.post(
        "/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json"
    ).json()["id"]
    wait_for(run_id, lambda r: r.state == RunState.RUNNING and r.phase == "crunching")
    cancelled = api.post(f"/api/whatif/runs/{run_id}/cancel/")
    assert cancelled.status_code == 202
    run = wait_for(run_id, lambda r: r.is_finished)
    assert (run.state, run.error) == (RunState.CANCELLED, "cancelled while running")


def test_it_cancels_a_pending_run_before_any_worker_starts_it(api: APIClient) -> None:
    o.store(*o.small_cluster().values())
    run_id = api.post(
        "/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json"
    ).json()["id"]
    assert api.post(f"/api/whatif/runs/{run_id}/cancel/").json()["state"] == "cancelled"
    services.whatif_run_execute(run_id=run_id)  # a worker picking it up late leaves it alone
    assert WhatIfRun.objects.get(pk=run_id).state == RunState.CANCELLED


def test_it_lets_only_the_owner_or_an_operator_cancel(api: APIClient) -> None:
    o.store(*o.small_cluster().values())
    run_id = api.post(
        "/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json"
    ).json()["id"]
    other = APIClient()
    other.force_authenticate(User.objects.create_user("otto"))
    assert other.post(f"/api/whatif/runs/{run_id}/cancel/").status_code == 403
    assert other.get(f"/api/whatif/runs/{run_id}/").status_code == 200  # but anyone logged in may read it


def test_it_times_out_a_run_that_passes_its_time_limit(
    worker: None, api: APIClient, endless: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = itertools.count(step=7)  # every look at the clock is 7 s later
    monkeypatch.setattr(services, "monotonic", lambda: float(next(ticks)))
    o.store(*o.small_cluster().values())
    run_id = api.post(
        "/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json"
    ).json()["id"]
    run = wait_for(run_id, lambda r: r.is_finished)
    assert run.state == RunState.TIMED_OUT
    assert run.error.startswith(f"stopped after the time limit of {run.time_limit_seconds} s")


def test_it_marks_a_run_whose_worker_died_as_failed_when_it_is_read(api: APIClient) -> None:
    long_ago = timezone.now() - timedelta(minutes=5)
    run = WhatIfRun.objects.create(
        kind="headroom",
        input={},
        state=RunState.RUNNING,
        time_limit_seconds=120,
        started_at=long_ago,
        heartbeat_at=long_ago,
    )
    body = api.get(f"/api/whatif/runs/{run.id}/").json()
    assert body["state"] == "failed"
    assert "the worker running this stopped responding" in body["error"]


def test_it_keeps_a_live_run_with_a_fresh_heartbeat_running() -> None:
    now = timezone.now()
    run = WhatIfRun.objects.create(
        kind="headroom",
        input={},
        state=RunState.RUNNING,
        time_limit_seconds=120,
        started_at=now,
        heartbeat_at=now,
    )
    assert services.whatif_reap_stale(now=now + timedelta(seconds=10)) == 0
    assert services.whatif_reap_stale(now=now + timedelta(seconds=31)) == 1
    assert WhatIfRun.objects.get(pk=run.pk).state == RunState.FAILED


def test_it_times_out_a_run_stuck_in_one_step_past_its_limit_even_with_a_heartbeat() -> None:
    now = timezone.now()
    run = WhatIfRun.objects.create(
        kind="headroom",
        input={},
        state=RunState.RUNNING,
        time_limit_seconds=60,
        started_at=now,
        heartbeat_at=now,
    )
    later = now + timedelta(seconds=95)
    WhatIfRun.objects.filter(pk=run.pk).update(heartbeat_at=later)
    assert services.whatif_reap_stale(now=later) == 1
    assert WhatIfRun.objects.get(pk=run.pk).state == RunState.TIMED_OUT


def test_it_documents_the_what_if_api_in_the_openapi_schema(api: APIClient) -> None:
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert {"/api/whatif/runs/", "/api/whatif/runs/{id}/", "/api/whatif/runs/{id}/cancel/"} <= set(
        schema["paths"]
    )
    assert "post" in schema["paths"]["/api/whatif/runs/"]


@pytest.mark.skipif(
    not settings.CELERY_BROKER_URL.startswith("memory://"), reason="a Redis queue survives restarts by itself"
)
@pytest.mark.usefixtures("shared_db")
def test_it_runs_pending_runs_left_over_from_a_restart_when_the_embedded_worker_starts() -> None:
    o.store(*o.small_cluster().values())
    leftover = WhatIfRun.objects.create(
        kind="headroom", input={"source": "class", "deviceClassName": o.DRIVER, "count": 1, "max_per_node": 8},
        time_limit_seconds=120,
    )  # fmt: skip
    start_embedded_worker()
    try:
        run = wait_for(leftover.pk, lambda r: r.is_finished)
    finally:
        stop_embedded_worker()
    assert (run.state, run.result["total"] if run.result else None) == (RunState.SUCCEEDED, 3)


def test_it_keeps_the_heartbeat_of_a_run_busy_in_one_long_step(
    worker: None, api: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def one_long_step(**kwargs: Any) -> dict[str, Any]:
        release.wait(30)  # a step that reports no progress while it works
        return {"done": True}

    monkeypatch.setattr(services, "whatif_answer", one_long_step)
    monkeypatch.setattr(services, "HEARTBEAT_SECONDS", 0.1)
    o.store(*o.small_cluster().values())
    run_id = api.post(
        "/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json"
    ).json()["id"]
    first = wait_for(run_id, lambda r: r.state == RunState.RUNNING).heartbeat_at
    assert first is not None
    wait_for(run_id, lambda r: r.heartbeat_at is not None and r.heartbeat_at > first)
    release.set()
    assert wait_for(run_id, lambda r: r.is_finished).result == {"done": True}
