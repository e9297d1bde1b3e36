"""The read API: login required (session or token), shared filters, constant queries per page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def user() -> User:
    return User.objects.create_user("viewer", password="pw-viewer-123")


@pytest.fixture
def api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def populate(devices: int) -> None:
    per_slice = 10
    objs = [("deviceclasses", f.device_class("gpu.example.com"))]
    for s in range(max(1, devices // per_slice)):
        pool = f"node-{s}"
        objs.append(
            (
                "resourceslices",
                f.resource_slice(
                    f"slice-{s}",
                    pool=pool,
                    node=pool,
                    devices=[f.gpu(f"gpu-{i}", numa=i % 2) for i in range(per_slice)],
                ),
            )
        )
    objs.append(("devicetaintrules", f.taint_rule("maint", selector={"pool": "node-0"})))
    objs.append(("resourceclaims", f.claim("c1", results=[f.result("gpu-1")])))
    f.write(*objs)


def test_it_refuses_anonymous_requests(user: User) -> None:
    client = APIClient()

    for path in [
        "/api/devices/",
        "/api/claims/",
        "/api/classes/",
        "/api/taint-rules/",
        "/api/nodes/",
        "/api/pools/",
        "/api/watch-health/",
        "/api/objects/",
    ]:
        assert client.get(path).status_code in (401, 403), path


def test_it_accepts_a_token(user: User) -> None:
    populate(10)
    token = Token.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")

    response = client.get("/api/devices/")

    assert response.status_code == 200
    assert response.json()["count"] == 10


def test_it_rejects_a_wrong_token() -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")

    response = client.get("/api/devices/")

    # 403 rather than 401 because SessionAuthentication comes first in settings (it sends no WWW-Authenticate).
    assert response.status_code in (401, 403)
    assert response.json()["detail"] == "Invalid token."


def test_it_filters_devices_with_the_shared_filterset(api: APIClient) -> None:
    populate(30)

    tainted = api.get("/api/devices/", {"taint": "NoSchedule"}).json()
    allocated = api.get("/api/devices/", {"state": "allocated"}).json()
    numa = api.get(
        "/api/devices/", {"attribute": "resource.kubernetes.io/numaNode=1", "pool": "node-2"}
    ).json()
    by_class = api.get("/api/devices/", {"device_class": "gpu.example.com"}).json()

    assert tainted["count"] == 10 and {d["pool"] for d in tainted["results"]} == {"node-0"}
    assert [(d["pool"], d["name"], d["claim_name"]) for d in allocated["results"]] == [
        ("node-0", "gpu-1", "c1")
    ]
    assert numa["count"] == 5
    assert by_class["count"] == 30


def test_it_answers_400_for_an_unknown_filter_choice(api: APIClient) -> None:
    populate(10)

    response = api.get("/api/devices/", {"state": "borrowed"})

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "state"


def test_it_answers_400_naming_the_rule_for_a_malformed_attribute_filter(api: APIClient) -> None:
    response = api.get("/api/devices/", {"attribute": "model"})

    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == "attribute" and "key=value" in error["message"]


@pytest.mark.parametrize(
    "path", ["/api/devices/", "/api/claims/", "/api/pools/", "/api/objects/?kind=resourceslices"]
)
def test_it_uses_the_same_number_of_queries_for_10_and_200_devices(api: APIClient, path: str) -> None:
    populate(10)
    with CaptureQueriesContext(connection) as small:
        assert api.get(path, {"limit": 500}).status_code == 200
    populate(200)
    with CaptureQueriesContext(connection) as large:
        response = api.get(path, {"limit": 500})
    assert response.status_code == 200

    assert len(large) == len(small)


def test_it_lists_classes_rules_nodes_and_watch_health(api: APIClient) -> None:
    populate(20)

    classes = api.get("/api/classes/").json()
    rules = api.get("/api/taint-rules/").json()
    nodes = api.get("/api/nodes/").json()
    rule = api.get("/api/taint-rules/maint/").json()

    assert classes["results"][0]["name"] == "gpu.example.com"
    assert classes["results"][0]["total"] == 20
    assert classes["results"][0]["allocated"] == 1
    assert classes["results"][0]["extended_resource_names"] == [
        "deviceclass.resource.kubernetes.io/gpu.example.com"
    ]
    assert rules["results"][0]["matched_devices"] == 10
    assert rule["taint"]["effect"] == "NoSchedule"
    assert {n["name"] for n in nodes["results"]} == {"node-0", "node-1"}
    assert api.get("/api/taint-rules/missing/").status_code == 404


def test_it_shows_claim_detail_with_results(api: APIClient) -> None:
    populate(10)
    claim_id = api.get("/api/claims/").json()["results"][0]["id"]

    detail = api.get(f"/api/claims/{claim_id}/").json()

    assert detail["state"] == "allocated"
    assert detail["results"][0]["device"] == "gpu-1"
    assert detail["object"]["metadata"]["name"] == "c1"


def test_it_publishes_an_openapi_schema_with_the_inventory_endpoints(api: APIClient) -> None:
    response = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    paths = response.json()["paths"]
    assert {"/api/devices/", "/api/claims/", "/api/taint-rules/", "/api/watch-health/"} <= set(paths)
    assert "taint" in {p["name"] for p in paths["/api/devices/"]["get"]["parameters"]}


def test_it_pages_devices_in_order_without_gaps_or_repeats(api: APIClient) -> None:
    populate(30)

    pages = [api.get("/api/devices/", {"limit": 7, "offset": o}).json() for o in range(0, 35, 7)]
    names = [(d["pool"], d["name"]) for page in pages for d in page["results"]]

    assert names == sorted(names) and len(names) == len(set(names)) == 30
    assert pages[0]["count"] == 30 and pages[0]["next"]
    assert api.get("/api/devices/", {"offset": 100}).json()["results"] == []
