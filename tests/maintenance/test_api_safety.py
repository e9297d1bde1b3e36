"""Through the API as an operator, everything that could select or taint more than meant is refused
with a 4xx naming the field, and nothing is stored or written (issue 9's "Done when")."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from maintenance.models import Maintenance
from tests.maintenance.support import GPU, rules_in

pytestmark = pytest.mark.django_db

BODY = {"title": "Drain node-0", "reason": "PSU swap", "key": "example.com/maintenance", "value": "psu",
        "effect": "NoExecute"}  # fmt: skip
GPU0 = {"driver": GPU, "pool": "node-0", "device": "gpu-0"}


@pytest.fixture
def api(operator: Any) -> Client:
    client = Client()
    client.force_login(operator)
    return client


def post(api: Client, url: str, body: Any) -> Any:
    return api.post(url, body, content_type="application/json")


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({}, "devices"),  # no selection at all
        ({"filters": {}}, "filters"),  # empty filters would be every device
        ({"filters": {"nod": "node-0"}}, "filters.nod"),  # a typo is not "no filter"
        ({"filters": {"node": 3}}, "filters.node"),
        (
            {"devices": [{"driver": GPU, "pool": "node-0", "device": "gpu-99"}]},
            "devices[0]",
        ),  # not in the inventory
        ({"devices": [{"driver": 1, "pool": "node-0", "device": "gpu-0"}]}, "devices[0].driver"),  # not "1"
        ({"devices": [{**GPU0, "nodes": "x"}]}, "devices[0].nodes"),
        ({"devices": []}, "devices"),
        ({"devices": "gpu-0"}, "devices"),
        ({"devices": [GPU0], "filters": {"node": "node-0"}}, "filters"),  # two selections: which one?
        ({"devices": [GPU0], "every_device": "yes"}, "every_device"),
        ({"devices": [GPU0], "titel": "typo"}, "titel"),
        ({"devices": [GPU0], "expected_count": 2}, "expected_count"),
        ({"filters": {"node": "node-0"}, "expected_count": "7"}, "expected_count"),
        ({"filters": {"node": "no-such-node"}}, "filters"),
    ],
)
def test_it_refuses_a_selection_that_was_not_made_explicitly(
    mirrored: Any, api: Client, extra: dict[str, Any], field: str
) -> None:
    response = post(api, "/api/maintenance/", {**BODY, **extra})
    assert response.status_code == 400, response.content
    assert field in {e["field"] for e in response.json()["errors"]}, response.json()
    assert not Maintenance.objects.exists()


def test_it_refuses_a_title_that_is_not_a_string(mirrored: Any, api: Client) -> None:
    response = post(api, "/api/maintenance/", {**BODY, "title": 5, "devices": [GPU0]})
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "title", "message": "must be a string, got a number 5"}]


def test_it_creates_a_draft_from_filters_that_match(mirrored: Any, api: Client) -> None:
    response = post(
        api, "/api/maintenance/", {**BODY, "filters": {"node": "node-0", "driver": GPU}, "expected_count": 4}
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["device_count"] == 4 and body["scope"]["nodes"] == ["node-0"]
    assert body["rules"][0]["selector"] == {"driver": GPU, "pool": "node-0"}


@pytest.fixture
def draft_id(mirrored: Any, api: Client) -> str:
    response = post(api, "/api/maintenance/", {**BODY, "devices": [GPU0]})
    assert response.status_code == 201, response.content
    return str(response.json()["id"])


def test_it_refuses_no_execute_without_a_preview(mirrored: Any, api: Client, draft_id: str) -> None:
    response = post(
        api, f"/api/maintenance/{draft_id}/apply/", {"effect": "NoExecute", "confirm": True, "typed": "1"}
    )
    assert response.status_code == 409
    body = response.json()
    assert body["errors"][0]["field"] == "preview" and "run the preview first" in body["errors"][0]["message"]
    assert body["current"]["state"] == "draft"
    assert rules_in(mirrored) == {}


@pytest.mark.parametrize("confirm", [1, "true", "yes", None, [True], {"ok": True}])
def test_it_accepts_only_the_json_boolean_true_as_confirmation(
    mirrored: Any, api: Client, draft_id: str, confirm: Any
) -> None:
    response = post(api, f"/api/maintenance/{draft_id}/apply/", {"effect": "NoExecute", "confirm": confirm})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "confirm"
    assert "JSON boolean true" in response.json()["errors"][0]["message"]
    assert rules_in(mirrored) == {}


def test_it_refuses_unknown_apply_fields(mirrored: Any, api: Client, draft_id: str) -> None:
    response = post(api, f"/api/maintenance/{draft_id}/apply/", {"effect": "None", "force": True})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "force"
    assert rules_in(mirrored) == {}


def test_it_enforces_through_the_api_once_previewed_and_typed(
    mirrored: Any, api: Client, draft_id: str
) -> None:
    from allocation.services import whatif_run_execute

    started = post(api, f"/api/maintenance/{draft_id}/preview/", {})
    assert started.status_code == 202
    whatif_run_execute(run_id=started.json()["run"])
    # No pod holds node-0/gpu-0 in the tiny world unless the scheduler put one there; the phrase says.
    progress = api.get(f"/api/maintenance/{draft_id}/progress/").json()
    assert progress["preview"]["state"] == "succeeded" and progress["preview"]["ready"]
    maintenance = Maintenance.objects.get(pk=draft_id)
    response = post(api, f"/api/maintenance/{draft_id}/apply/",
                    {"effect": "NoSchedule", "confirm": True, "version": maintenance.version,
                     "preview": started.json()["run"]})  # fmt: skip
    assert response.status_code == 200, response.content
    assert {r["spec"]["taint"]["effect"] for r in rules_in(mirrored).values()} == {"NoSchedule"}


def test_it_says_a_device_reference_is_malformed_or_misnamed(mirrored: Any, api: Client) -> None:
    misnamed = post(api, "/api/maintenance/", {**BODY, "device": "garbage"})
    assert misnamed.status_code == 400
    messages = {e["field"]: e["message"] for e in misnamed.json()["errors"]}
    assert messages["device"].startswith('Unknown field: did you mean "devices"? Supported fields are title,')
    malformed = post(api, "/api/maintenance/", {**BODY, "devices": ["gpu.example.com/node-0/gpu-0"]})
    assert malformed.status_code == 400
    message = 'not a device reference: must be an object {"driver", "pool", "device"}, got a string '
    assert malformed.json()["errors"] == [
        {"field": "devices[0]", "message": message + '"gpu.example.com/node-0/gpu-0"'}
    ]
    assert not Maintenance.objects.exists()


@pytest.mark.parametrize(("field", "limit"), [("title", 200), ("reason", 500), ("ticket", 100)])
def test_it_refuses_a_text_longer_than_it_stores_instead_of_cutting_it(
    mirrored: Any, api: Client, field: str, limit: int
) -> None:
    response = post(api, "/api/maintenance/", {**BODY, "devices": [GPU0], field: "x" * (limit + 1)})
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": field, "message": f"Too long: may not be more than {limit} characters, got {limit + 1}"}
    ]
    assert not Maintenance.objects.exists()
    whole = post(api, "/api/maintenance/", {**BODY, "devices": [GPU0], field: "y" * limit})
    assert whole.status_code == 201, whole.content
    assert whole.json()[field] == "y" * limit


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"title": "PSU\x00swap"}, "title"),
        ({"reason": "\x00"}, "reason"),
        ({"ticket": "OPS-\x001"}, "ticket"),
        ({"key": "example.com/m\x00"}, "key"),
        ({"value": "a\x00"}, "value"),
        ({"filters": {"node": "node-0\x00"}, "devices": None}, "filters.node"),
        ({"devices": [{**GPU0, "device": "gpu-0\x00"}]}, "devices[0].device"),
    ],
)
def test_it_refuses_a_nul_character_in_a_draft(
    mirrored: Any, api: Client, extra: dict[str, Any], field: str
) -> None:
    body = {**BODY, "devices": [GPU0], **extra}
    body = {k: v for k, v in body.items() if v is not None}
    response = post(api, "/api/maintenance/", body)
    assert response.status_code == 400, response.content
    assert {"field": field, "message": "must not contain the NUL character (\\u0000)"} in response.json()[
        "errors"
    ]
    assert not Maintenance.objects.exists()


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("apply", {"effect": "NoSchedule", "confirm": True, "typed": "yes\x00"}, "typed"),
        ("apply", {"effect": "NoSchedule", "confirm": True, "preview": "\x00"}, "preview"),
        ("undo", {"mode": "delete\x00"}, "mode"),
    ],
)
def test_it_refuses_a_nul_character_in_an_action(
    mirrored: Any, api: Client, draft_id: str, path: str, body: dict[str, Any], field: str
) -> None:
    version = Maintenance.objects.get(pk=draft_id).version
    response = post(api, f"/api/maintenance/{draft_id}/{path}/", body)
    assert response.status_code == 400, response.content
    assert {"field": field, "message": "must not contain the NUL character (\\u0000)"} in response.json()[
        "errors"
    ]
    assert Maintenance.objects.get(pk=draft_id).version == version and rules_in(mirrored) == {}
