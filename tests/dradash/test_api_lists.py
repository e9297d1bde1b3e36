"""Every list of the REST API is one envelope {count, next, previous, results}, paged by a capped `limit`."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

from allocation.services import whatif_run_create
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db

ENVELOPE = {"count", "next", "previous", "results"}
LISTS = [
    "/api/devices/",
    "/api/pools/",
    "/api/claims/",
    "/api/pods/",
    "/api/classes/",
    "/api/taint-rules/",
    "/api/nodes/",
    "/api/watch-health/",
    "/api/objects/",
    "/api/whatif/runs/",
    "/api/maintenance/",
    "/api/maintenance/audit/",
]


@pytest.fixture
def api() -> Client:
    user = User.objects.create_user("ada")
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


@pytest.fixture
def inventory() -> None:
    f.write(
        ("deviceclasses", f.device_class("gpu.example.com")),
        ("deviceclasses", f.device_class("a.example.com", extended="example.com/gpu")),
        ("deviceclasses", f.device_class("b.example.com", extended="example.com/gpu")),
        *[("nodes", f.node(f"node-{i}")) for i in range(3)],
        *[
            ("resourceslices", f.resource_slice(f"s{i}", pool=f"node-{i}", node=f"node-{i}", devices=[f.gpu("gpu-0")]))
            for i in range(3)
        ],
        ("devicetaintrules", f.taint_rule("r1", selector={"pool": "node-0"})),
        ("devicetaintrules", f.taint_rule("r2", selector={"pool": "node-1"})),
    )  # fmt: skip


@pytest.mark.parametrize("path", LISTS)
def test_it_answers_every_list_in_the_one_envelope(api: Client, inventory: None, path: str) -> None:
    response = api.get(path)
    assert response.status_code == 200, response.content
    assert set(response.json()) >= ENVELOPE


@pytest.mark.parametrize("path", LISTS)
def test_it_refuses_an_unbounded_limit_on_every_list(api: Client, path: str) -> None:
    for query in ("limit=100000000000000000000", "limit=1001", "limit=x", "offset=-1"):
        response = api.get(f"{path}?{query}")
        assert response.status_code == 400, (path, query, response.content)
        assert response.json()["errors"][0]["field"] == query.split("=")[0]


@pytest.mark.parametrize(
    ("path", "total"),
    [("/api/nodes/", 3), ("/api/taint-rules/", 2), ("/api/classes/", 3), ("/api/pools/", 3)],
)
def test_it_honours_limit_and_offset_on_lists_built_by_selectors(
    api: Client, inventory: None, path: str, total: int
) -> None:
    first = api.get(f"{path}?limit={total - 1}").json()
    rest = api.get(first["next"]).json()

    assert first["count"] == total and len(first["results"]) == total - 1 and first["previous"] is None
    assert len(rest["results"]) == 1 and rest["next"] is None and rest["previous"]
    names = [r["name"] for r in first["results"] + rest["results"]]
    assert len(set(names)) == total


def test_it_keeps_the_class_conflict_warnings_beside_the_envelope(api: Client, inventory: None) -> None:
    body = api.get("/api/classes/?limit=1").json()
    assert len(body["results"]) == 1
    assert any("example.com/gpu" in w for w in body["warnings"])


def test_it_pages_what_if_runs(api: Client, inventory: None) -> None:
    user = User.objects.get(username="ada")
    for _ in range(2):
        whatif_run_create(
            kind="headroom", input={"source": "class", "deviceClassName": "gpu.example.com"}, user=user
        )
    body = api.get("/api/whatif/runs/?limit=1").json()
    assert body["count"] == 2 and len(body["results"]) == 1 and body["next"]


def test_the_api_root_lists_every_rooms_endpoints(api: Client) -> None:
    listed = api.get("/api/").json()
    for key, path in {
        "devices": "/api/devices/",
        "whatif-runs": "/api/whatif/runs/",
        "maintenance": "/api/maintenance/",
        "maintenance-audit": "/api/maintenance/audit/",
        "migration-upgrade": "/api/migration/upgrade/",
        "migration-device-plugins": "/api/migration/device-plugins/",
        "migration-pool-status": "/api/migration/pool-status/",
        "schema": "/api/schema/",
        "docs": "/api/docs/",
    }.items():
        assert listed.get(key, "").endswith(path), (key, listed.get(key))


def test_list_endpoints_refuse_unknown_parameters_naming_them(api: Client) -> None:
    """The devices and the audit API answer an unknown parameter the same way: 400 naming it and the
    supported ones; both page with limit (the audit API's page_size was accepted and ignored)."""
    for path, param in (
        ("/api/devices/?bogus=1", "bogus"),
        ("/api/maintenance/audit/?page_size=2", "page_size"),
        ("/api/maintenance/audit/export.csv?bogus=1", "bogus"),
        ("/api/claims/?stat=pending", "stat"),
    ):
        response = api.get(path)
        assert response.status_code == 400, (path, response.content)
        body = response.json()
        assert body["errors"][0]["field"] == param, body
        assert "supported are" in body["errors"][0]["message"] and "limit" in body["errors"][0]["message"]
    assert api.get("/api/devices/?state=free&limit=1&offset=0&format=json").status_code == 200
    assert api.get("/api/maintenance/audit/?limit=2").status_code == 200
    assert api.get("/api/devices/1/?bogus=1").status_code in (200, 404)  # a detail is not a list


@pytest.mark.parametrize("path", [*LISTS, "/api/search/?q=gpu"])
def test_every_list_refuses_a_parameter_it_does_not_know(api: Client, path: str) -> None:
    """A misspelt filter must not quietly answer with everything, on any list."""
    joiner = "&" if "?" in path else "?"
    response = api.get(f"{path}{joiner}nmae=gpu-0")
    assert response.status_code == 400, (path, response.content)
    error = response.json()["errors"][0]
    assert error["field"] == "nmae" and "limit" in error["message"], error
    assert api.get(f"{path}{joiner}limit=1&offset=0&format=json").status_code == 200


@pytest.mark.parametrize("path", ["/api/migration/device-plugins/", "/api/migration/pool-status/"])
def test_an_endpoint_without_parameters_refuses_any_but_format(api: Client, path: str) -> None:
    response = api.get(f"{path}?driver=gpu.example.com")
    assert response.status_code == 400, response.content
    error = response.json()["errors"][0]
    assert (error["field"], error["message"]) == ("driver", "unknown parameter; supported are format")
    assert api.get(f"{path}?format=json").status_code == 200
