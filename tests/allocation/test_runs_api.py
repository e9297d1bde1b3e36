"""The REST API of what-if runs: create (202, queued, never run in the request), read, list, cancel,
the per-user limit, and deciding on a read only about the run being read."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from allocation import services
from allocation.models import RunState, WhatIfRun
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db
ONE_GPU_TEMPLATE = {
    "source": "pick",
    "kind": "ResourceClaimTemplate",
    "namespace": "default",
    "name": "one-gpu",
}


@pytest.fixture
def viewer() -> User:
    return User.objects.create_user("vera", password="pw-vera-123")


@pytest.fixture
def api(viewer: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(viewer)
    o.store(*o.small_cluster().values())
    return client


def ask(api: APIClient) -> str:
    created = api.post("/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json")
    assert created.status_code == 202, created.content
    return str(created.json()["id"])


def stale_run(**fields: object) -> WhatIfRun:
    long_ago = timezone.now() - timedelta(minutes=5)
    defaults: dict[str, object] = {
        "kind": "headroom",
        "input": {},
        "state": RunState.RUNNING,
        "time_limit_seconds": 120,
        "started_at": long_ago,
        "heartbeat_at": long_ago,
    }
    return WhatIfRun.objects.create(**{**defaults, **fields})


def test_it_queues_a_run_and_never_answers_it_inside_the_request(api: APIClient) -> None:
    created = api.post("/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json")
    assert created.status_code == 202
    body = created.json()
    assert (body["state"], body["kind_label"]) == ("pending", "Headroom")
    assert created["Location"] == body["page_url"] == f"/whatif/{body['id']}/"
    assert body["ws_url"] == f"/ws/whatif/{body['id']}/"
    run = WhatIfRun.objects.get(pk=body["id"])
    assert (run.state, run.result) == (RunState.PENDING, None)
    assert run.max_search_steps == 1_000_000 and run.time_limit_seconds == 120


def test_it_serves_the_answer_once_a_worker_has_run_it(api: APIClient) -> None:
    run_id = ask(api)
    services.whatif_run_execute(run_id=run_id)
    body = api.get(f"/api/whatif/runs/{run_id}/").json()
    assert (body["state"], body["percent"], body["error"], body["created_by"]) == (
        "succeeded",
        100,
        "",
        "vera",
    )
    assert body["result"]["total"] == 3
    listed = api.get("/api/whatif/runs/").json()["results"]
    assert [r["id"] for r in listed] == [run_id]
    assert "result" not in listed[0]


def test_it_requires_login_for_the_api() -> None:
    assert APIClient().get("/api/whatif/runs/").status_code in (401, 403)
    assert APIClient().post("/api/whatif/runs/", {}, format="json").status_code in (401, 403)


def test_it_answers_a_missing_field_with_the_error_shape_of_the_api(api: APIClient) -> None:
    response = api.post("/api/whatif/runs/", {"input": {}}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "kind", "message": "This field is required."}]
    assert response.json()["detail"] == "kind: This field is required."


def test_it_limits_how_many_runs_one_user_has_going_at_once(api: APIClient) -> None:
    first, second = ask(api), ask(api)
    third = api.post("/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json")
    assert third.status_code == 429
    (error,) = third.json()["errors"]
    assert "at most 2" in error["message"] and "DRADASH_WHATIF_MAX_RUNS_PER_USER" in error["message"]
    other = APIClient()
    other.force_authenticate(User.objects.create_user("otto"))
    assert (
        other.post(
            "/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json"
        ).status_code
        == 202
    )
    api.post(f"/api/whatif/runs/{first}/cancel/")  # a finished run frees its place
    assert ask(api) not in (first, second)
    assert WhatIfRun.objects.filter(created_by__username="vera").count() == 3


def test_it_cancels_a_pending_run_before_any_worker_starts_it(api: APIClient) -> None:
    run_id = ask(api)
    assert api.post(f"/api/whatif/runs/{run_id}/cancel/").json()["state"] == "cancelled"
    services.whatif_run_execute(run_id=run_id)  # a worker picking it up late leaves it alone
    assert WhatIfRun.objects.get(pk=run_id).state == RunState.CANCELLED


def test_it_lets_only_the_owner_or_an_operator_cancel(api: APIClient) -> None:
    run_id = ask(api)
    other = APIClient()
    other.force_authenticate(User.objects.create_user("otto"))
    assert other.post(f"/api/whatif/runs/{run_id}/cancel/").status_code == 403
    assert other.get(f"/api/whatif/runs/{run_id}/").status_code == 200  # but anyone logged in may read it


def test_it_shows_a_run_whose_worker_died_as_failed_when_that_run_is_read(api: APIClient) -> None:
    run = stale_run()
    body = api.get(f"/api/whatif/runs/{run.id}/").json()
    assert body["state"] == "failed"
    assert "the worker running this stopped responding" in body["error"]


def test_it_decides_on_a_read_only_about_the_run_being_read(api: APIClient) -> None:
    dead, other = stale_run(), stale_run()
    api.get(f"/api/whatif/runs/{dead.id}/")
    api.get("/api/whatif/runs/")  # a list reads many runs and decides about none
    assert WhatIfRun.objects.get(pk=other.pk).state == RunState.RUNNING
    assert WhatIfRun.objects.get(pk=dead.pk).state == RunState.FAILED
    assert services.whatif_reap_stale() == 1  # the worker's periodic reaper finds the other one
    assert WhatIfRun.objects.get(pk=other.pk).state == RunState.FAILED


def test_it_documents_the_what_if_api_in_the_openapi_schema(api: APIClient) -> None:
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert {"/api/whatif/runs/", "/api/whatif/runs/{id}/", "/api/whatif/runs/{id}/cancel/"} <= set(
        schema["paths"]
    )
    kinds = schema["components"]["schemas"]["KindEnum"]["enum"]
    assert kinds == ["feasibility", "headroom", "taint_impact", "plugin_removal"]


def test_a_taint_impact_whose_selector_finds_no_device_fails_naming_the_selector(api: APIClient) -> None:
    body = {"kind": "taint_impact",
            "input": {"selector": {"driver": "nope.example.com"}, "taint": {"key": "k", "effect": "NoSchedule"}}}  # fmt: skip
    created = api.post("/api/whatif/runs/", body, format="json")
    assert created.status_code == 202, created.content
    run_id = str(created.json()["id"])
    services.whatif_run_execute(run_id=run_id)
    answer = api.get(f"/api/whatif/runs/{run_id}/").json()
    assert answer["state"] == "failed"
    assert "input.selector" in answer["error"] and "driver nope.example.com" in answer["error"]
