"""Only operators and admins author; viewers see everything and can run previews."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from maintenance.planning import DeviceRef
from maintenance.services import Draft, maintenance_create

pytestmark = pytest.mark.django_db

BODY = {
    "title": "Drain node-0",
    "reason": "PSU swap",
    "key": "example.com/maintenance",
    "value": "psu",
    "effect": "NoExecute",
    "devices": [{"driver": "gpu.example.com", "pool": "node-0", "device": "gpu-0"}],
}


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def a_maintenance(user: Any) -> Any:
    return maintenance_create(
        user=user,
        draft=Draft(title="t", reason="r", ticket="", key="example.com/m", value="", effect="NoExecute",
                    devices=[DeviceRef("gpu.example.com", "node-0", "gpu-0")], filters={}),
    )  # fmt: skip


def test_it_refuses_authoring_to_a_viewer_over_the_api(mirrored: Any, viewer: Any, operator: Any) -> None:
    client = logged_in(viewer)
    assert client.post("/api/maintenance/", BODY, content_type="application/json").status_code == 403
    m = a_maintenance(operator)
    for action in ("apply", "undo"):
        response = client.post(f"/api/maintenance/{m.id}/{action}/", {"effect": "NoExecute", "confirm": True},
                               content_type="application/json")  # fmt: skip
        assert response.status_code == 403
    assert client.get(f"/api/maintenance/{m.id}/").status_code == 200
    assert client.get(f"/api/maintenance/{m.id}/progress/").status_code == 200


def test_it_lets_an_operator_create_a_draft_over_the_api(mirrored: Any, operator: Any) -> None:
    response = logged_in(operator).post("/api/maintenance/", BODY, content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["state"] == "draft"
    assert "kind: DeviceTaintRule" in body["yaml"]


def test_it_answers_bad_input_with_the_field_and_rule(mirrored: Any, operator: Any) -> None:
    response = logged_in(operator).post(
        "/api/maintenance/",
        {**BODY, "effect": "PreferNoSchedule", "key": "bad key"},
        content_type="application/json",
    )
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"taint.key", "taint.effect"}


def test_it_hides_the_authoring_controls_from_a_viewer(mirrored: Any, viewer: Any, operator: Any) -> None:
    m = a_maintenance(operator)
    page = logged_in(viewer).get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="enforce-NoExecute"' not in page and 'id="apply-none"' not in page
    assert 'id="run-preview"' in page
    assert logged_in(viewer).get("/maintenance/new/").status_code == 403
    operator_page = logged_in(operator).get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="enforce-NoExecute"' in operator_page and 'id="apply-none"' in operator_page


def test_it_requires_login(mirrored: Any, operator: Any) -> None:
    m = a_maintenance(operator)
    assert Client().get(f"/maintenance/{m.id}/").status_code == 302
    assert Client().get("/api/maintenance/").status_code in (401, 403)
