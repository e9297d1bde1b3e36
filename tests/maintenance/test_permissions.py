"""Only operators and admins author (and preview: it replaces the preview others act on); viewers see everything."""

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
    assert 'id="run-preview"' not in page
    assert logged_in(viewer).get("/maintenance/new/").status_code == 403
    operator_page = logged_in(operator).get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="enforce-NoExecute"' in operator_page and 'id="apply-none"' in operator_page


def test_it_requires_login(mirrored: Any, operator: Any) -> None:
    m = a_maintenance(operator)
    assert Client().get(f"/maintenance/{m.id}/").status_code == 302
    assert Client().get("/api/maintenance/").status_code in (401, 403)


def test_a_viewer_cannot_start_a_preview_of_an_operators_maintenance(
    mirrored: Any, viewer: Any, operator: Any
) -> None:
    """A preview raises the version and replaces the preview the operator's enforce forms were drawn on: a
    write. The page hides the button from a viewer and says why; the page and the API refuse it (403)."""
    from maintenance.models import AuditEntry, MaintenancePreview

    m = a_maintenance(operator)
    client = logged_in(viewer)
    page = client.get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="run-preview"' not in page and "Only operators and admins can run the preview" in page
    refused = client.post(f"/maintenance/{m.id}/preview/", {"version": m.version})
    assert refused.status_code == 403
    assert "Only operators and admins may change a maintenance" in refused.content.decode()
    api = client.post(
        f"/api/maintenance/{m.id}/preview/", {"version": m.version}, content_type="application/json"
    )
    assert api.status_code == 403 and "Only operators and admins" in api.json()["detail"]
    m.refresh_from_db()
    assert m.version == 1 and not MaintenancePreview.objects.filter(maintenance=m).exists()
    assert not AuditEntry.objects.filter(maintenance=m, action="preview").exists()


@pytest.mark.parametrize("action", ["preview", "apply", "undo", "pause", "resume", "abort"])
def test_every_maintenance_write_refuses_a_viewer(
    mirrored: Any, viewer: Any, operator: Any, action: str
) -> None:
    m = a_maintenance(operator)
    client = logged_in(viewer)
    body = {"version": m.version, "effect": "None", "mode": "delete", "confirm": "yes"}
    assert client.post(f"/maintenance/{m.id}/{action}/", body).status_code == 403
    api = client.post(
        f"/api/maintenance/{m.id}/{action}/", {"version": m.version}, content_type="application/json"
    )
    assert api.status_code == 403
    m.refresh_from_db()
    assert m.version == 1
