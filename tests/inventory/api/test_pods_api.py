"""GET /api/pods/: the Pods list as JSON, with the page's filters (one FilterSet), the API's envelope and its
errors, in the OpenAPI schema."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.inventory import factories as f
from tests.inventory.pages.test_pods_list import pod

pytestmark = pytest.mark.django_db

NO_FIT = "0/3 nodes are available: 3 cannot allocate all claims."
UNSCHEDULABLE = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": NO_FIT}


@pytest.fixture
def api() -> APIClient:
    client = APIClient()
    client.force_authenticate(User.objects.create_user("viewer", password="pw-viewer-123"))
    return client


@pytest.fixture
def pods() -> None:
    f.write(
        pod("trainer-0", node="node-1", claims=[{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
            generated=[{"name": "gpu", "resourceClaimName": "trainer-0-gpu-x7k2p"}]),
        pod("legacy-gpu", namespace="default", node="node-2",
            containers=[{"name": "main", "resources": {"limits": {"example.com/gpu": "1"}}}],
            extended={"resourceClaimName": "legacy-gpu-er", "requestMappings": [
                {"containerName": "main", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"}]}),
        pod("web", namespace="default", phase="Pending", conditions=[UNSCHEDULABLE]),
    )  # fmt: skip


def names(api: APIClient, query: dict[str, str]) -> list[str]:
    response = api.get("/api/pods/", query)
    assert response.status_code == 200, response.content
    return [p["name"] for p in response.json()["results"]]


def test_it_lists_pods_with_status_node_claims_and_extended_resources(api: APIClient, pods: None) -> None:
    body = api.get("/api/pods/").json()
    assert body["count"] == 3 and body["previous"] is None
    legacy, web, trainer = body["results"]  # namespace, then name
    assert (trainer["namespace"], trainer["name"], trainer["node_name"], trainer["phase"]) == (
        "ml", "trainer-0", "node-1", "Running",
    )  # fmt: skip
    assert (trainer["status"], trainer["ready"], trainer["restarts"]) == ("Running", "0/1", 0)
    assert trainer["claims"] == [
        {"podClaim": "gpu", "name": "trainer-0-gpu-x7k2p", "source": "template", "template": "single-gpu"}
    ]
    assert legacy["extended_resources"] == [{"name": "example.com/gpu", "count": 1}]
    assert legacy["claims"][0]["source"] == "extended" and legacy["claim_count"] == 1
    assert web["claims"] == [] and web["node_name"] == "" and web["created"] == "2026-11-01T10:00:00Z"
    assert (web["waiting_reason"], web["waiting_message"]) == ("Unschedulable", NO_FIT)
    assert (trainer["waiting_reason"], trainer["waiting_message"]) == ("", "")
    assert api.get(f"/api/pods/{trainer['id']}/").json()["uid"] == trainer["uid"]


def test_it_filters_as_the_page_does(api: APIClient, pods: None) -> None:
    assert names(api, {"namespace": "default"}) == ["legacy-gpu", "web"]
    assert names(api, {"node": "node-1"}) == ["trainer-0"]
    assert names(api, {"phase": "Pending"}) == ["web"]
    assert names(api, {"uses_claims": "true"}) == ["legacy-gpu", "trainer-0"]
    assert names(api, {"uses_claims": "0"}) == ["web"]
    assert names(api, {"q": "GPU"}) == ["legacy-gpu"]
    assert names(api, {"waiting": "true"}) == ["web"]
    assert names(api, {"waiting": "false"}) == ["legacy-gpu", "trainer-0"]


@pytest.mark.parametrize(
    ("query", "field"),
    [({"phase": "Sleeping"}, "phase"), ({"uses_claims": "maybe"}, "uses_claims"), ({"nod": "node-1"}, "nod"),
     ({"limit": "0"}, "limit"), ({"waiting": "maybe"}, "waiting")],
)  # fmt: skip
def test_it_answers_400_naming_a_refused_parameter(
    api: APIClient, pods: None, query: dict[str, str], field: str
) -> None:
    response = api.get("/api/pods/", query)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field


def test_it_needs_a_login() -> None:
    assert APIClient().get("/api/pods/").status_code in (401, 403)


def test_it_reads_a_page_of_pods_in_as_many_queries_as_a_few(api: APIClient) -> None:
    f.write(*(pod(f"p{i}") for i in range(3)))
    with CaptureQueriesContext(connection) as few:
        assert api.get("/api/pods/").status_code == 200
    f.write(*(pod(f"p{i}") for i in range(3, 150)))
    with CaptureQueriesContext(connection) as many:
        assert api.get("/api/pods/").json()["count"] == 150
    assert len(many) == len(few)


def test_it_is_in_the_api_root_and_the_openapi_schema(api: APIClient) -> None:
    assert api.get("/api/").json()["pods"].endswith("/api/pods/")
    paths = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()["paths"]
    assert {"/api/pods/", "/api/pods/{id}/"} <= set(paths)
    parameters = {p["name"] for p in paths["/api/pods/"]["get"]["parameters"]}
    assert {"namespace", "node", "phase", "uses_claims", "waiting", "q", "limit", "offset"} <= parameters
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    pod = schema["components"]["schemas"]["Pod"]
    assert {"waiting_reason", "waiting_message"} <= set(pod["required"])
    assert "Unschedulable" in pod["properties"]["waiting_reason"]["description"]
