"""The maintenance API speaks the API's conventions: lists in the paging envelope, errors in the error
envelope with this room's context (`current`, `headline`) beside `errors` and `detail`, object bodies."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from maintenance.models import AuditEntry
from tests.maintenance.support import create, rules_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(operator: Any) -> Client:
    client = Client()
    client.force_login(operator)
    return client


@pytest.mark.parametrize("body", ["[]", "[{}]", '"NoExecute"', "7"])
def test_it_refuses_a_body_that_is_not_an_object_on_every_write(
    mirrored: Any, operator: Any, api: Client, body: str
) -> None:
    m = create(operator)
    for action in ("apply/", "undo/", "preview/"):
        response = api.post(f"/api/maintenance/{m.id}/{action}", body, content_type="application/json")
        assert response.status_code == 400, (action, response.content)
        assert response.json()["errors"][0]["field"] == "body"
    response = api.post("/api/maintenance/", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "body"
    assert rules_in(mirrored) == {}


def test_it_answers_a_conflict_in_the_envelope_with_the_current_state_beside_it(
    mirrored: Any, operator: Any, api: Client
) -> None:
    m = create(operator)
    response = api.post(
        f"/api/maintenance/{m.id}/apply/",
        {"effect": "None", "version": m.version + 1},
        content_type="application/json",
    )
    body = response.json()
    assert response.status_code == 409
    assert body["errors"][0]["field"] == "version"
    assert body["detail"].startswith("version: ")
    assert body["current"]["version"] == m.version and body["headline"]


def test_it_answers_an_unknown_audit_filter_in_the_envelope(api: Client) -> None:
    for url in ("/api/maintenance/audit/?actr=olivia", "/api/maintenance/audit/export.csv?actr=olivia"):
        body = api.get(url).json()
        assert body["errors"][0]["field"] == "actr" and body["detail"].startswith("actr: ")


def test_it_pages_maintenances_and_the_audit_log(mirrored: Any, operator: Any, api: Client) -> None:
    for i in range(3):
        create(operator, title=f"m{i}")
    page = api.get("/api/maintenance/?limit=2").json()
    assert page["count"] == 3 and len(page["results"]) == 2 and page["next"]
    assert [m["title"] for m in page["results"]] == ["m2", "m1"]  # newest first
    assert AuditEntry.objects.count() >= 3
    audit = api.get("/api/maintenance/audit/?limit=2").json()
    assert len(audit["results"]) == 2 and audit["next"]
    assert api.get("/api/maintenance/audit/?limit=5000").status_code == 400


def test_it_refuses_a_form_body_on_every_write_naming_the_type_not_a_field(
    mirrored: Any, operator: Any, api: Client
) -> None:
    # A form cannot carry `"confirm": true`, a version number or a list of devices: taking one only to
    # say `version: must be a non-negative integer, got a string "3"` misleads, and so did the schema.
    m = create(operator)
    form = "application/x-www-form-urlencoded"
    for url, body in (
        ("/api/maintenance/", "title=t&reason=r&key=example.com/x&effect=None&filters=driver"),
        *((f"/api/maintenance/{m.id}/{a}/", f"version={m.version}") for a in ("preview", "pause", "undo")),
        (f"/api/maintenance/{m.id}/apply/", f"effect=NoSchedule&confirm=true&version={m.version}"),
    ):
        response = api.post(url, body, content_type=form)
        assert response.status_code == 415, (url, response.content)
        assert form in response.json()["detail"]
    assert rules_in(mirrored) == {}
    m.refresh_from_db()
    assert m.state == "draft"


def test_its_schema_offers_only_json_bodies_for_maintenance_writes() -> None:
    from tests.dradash.test_api_fuzz import openapi_schema

    paths = openapi_schema()["paths"]
    writes = {
        p: ops["post"] for p, ops in paths.items() if p.startswith("/api/maintenance/") and "post" in ops
    }
    assert len(writes) == 8
    assert {p: list(op["requestBody"]["content"]) for p, op in writes.items()} == {
        p: ["application/json"] for p in writes
    }
