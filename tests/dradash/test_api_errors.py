"""Malformed input on the REST API gets a 4xx in the one error envelope {errors: [{field, message}], detail}:
no 5xx, no HTML page, no format-suffix routes; devices are found by id or by driver/pool/name."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

from inventory.models import Device
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> Client:
    user = User.objects.create_user("ada")
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


@pytest.fixture
def devices() -> None:
    f.write(
        ("resourceslices", f.resource_slice("plain", pool="node-0", devices=[f.gpu("gpu-0")])),
        (
            "resourceslices",
            f.resource_slice("slashed", pool="rack-1/node-0", node="", devices=[f.gpu("gpu-0")]),
        ),
    )


def assert_envelope(response: object, status: int, field: str | None = None) -> dict[str, object]:
    assert response.status_code == status, response.content  # type: ignore[attr-defined]
    assert response["Content-Type"].startswith("application/json")  # type: ignore[index]
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) >= {"errors", "detail"} and body["detail"]
    assert all(e["message"] for e in body["errors"])
    if field is not None:
        assert field in {e["field"] for e in body["errors"]}, body
    return body


@pytest.mark.parametrize(
    "path",
    ["/api/classes.json", "/api/devices.json", "/api/nodes.json", "/api/taint-rules.json", "/api/.json"],
)
def test_it_has_no_format_suffix_routes(api: Client, path: str) -> None:
    assert_envelope(api.get(path), 404)


def test_it_answers_an_unknown_api_path_and_an_id_with_a_dot_in_json(api: Client) -> None:
    assert_envelope(api.get("/api/no-such-thing/"), 404)
    assert_envelope(api.get("/api/devices/2.5e-313/"), 404)


def test_it_refuses_an_unknown_format_with_400_naming_it(api: Client) -> None:
    assert_envelope(api.get("/api/devices/?format=xml"), 400, "format")
    assert_envelope(api.get("/api/schema/?format=7%C3%A5"), 400, "format")


def test_it_refuses_the_schema_to_anonymous_clients_in_json() -> None:
    assert_envelope(Client().get("/api/schema/"), 401)


@pytest.mark.parametrize("body", ["[]", "[1, 2]", '"text"', "3", "true", "null"])
def test_it_refuses_a_body_that_is_not_a_json_object_naming_body(api: Client, body: str) -> None:
    response = api.post("/api/whatif/runs/", body, content_type="application/json")
    assert_envelope(response, 400, "body")


def test_it_refuses_an_attribute_filter_with_a_percent_sign_as_400(api: Client, devices: None) -> None:
    # django-filter formats validation messages with %: user text in the message used to raise a TypeError
    assert_envelope(api.get("/api/devices/", {"attribute": "%"}), 400, "attribute")
    assert_envelope(api.get("/api/devices/", {"attribute": "%(x)s %d"}), 400, "attribute")


def test_it_finds_a_device_by_driver_pool_and_name_in_the_query(api: Client, devices: None) -> None:
    response = api.get(
        "/api/devices/by-name/", {"driver": "gpu.example.com", "pool": "rack-1/node-0", "device": "gpu-0"}
    )
    assert response.status_code == 200, response.content
    assert (response.json()["pool"], response.json()["name"]) == ("rack-1/node-0", "gpu-0")


def test_it_names_the_missing_part_of_a_device_identity(api: Client, devices: None) -> None:
    assert_envelope(
        api.get("/api/devices/by-name/", {"driver": "gpu.example.com", "pool": "node-0"}), 400, "device"
    )
    gone = api.get(
        "/api/devices/by-name/", {"driver": "gpu.example.com", "pool": "node-0", "device": "gpu-9"}
    )
    assert_envelope(gone, 404)


@pytest.mark.parametrize("pool", ["rack-1/node-0", quote("rack-1/node-0", safe="")])
def test_it_finds_a_device_by_identity_in_the_path_even_with_a_slash_in_the_pool(
    api: Client, devices: None, pool: str
) -> None:
    response = api.get(f"/api/devices/gpu.example.com/{pool}/gpu-0/")
    assert response.status_code == 200, response.content
    assert response.json()["pool"] == "rack-1/node-0"
    assert api.get("/api/devices/gpu.example.com/node-0/gpu-0/").json()["pool"] == "node-0"
    assert_envelope(api.get("/api/devices/gpu.example.com/node-0/gpu-9/"), 404)


def test_it_keeps_the_device_id_route(api: Client, devices: None) -> None:
    device = Device.objects.get(pool="node-0")
    assert api.get(f"/api/devices/{device.pk}/").json()["name"] == "gpu-0"
