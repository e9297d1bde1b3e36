"""The Pods list (/pods/): every pod with kubectl's status, its node, the ResourceClaims it uses (links to
their pages) and the extended resources DRA serves it; filtered, sorted and paged by the server, refused
queries named, cluster strings escaped."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db

JSON = dict[str, Any]
PODS = "/pods/"


def pod(
    name: str,
    *,
    namespace: str = "ml",
    node: str = "",
    phase: str = "Running",
    created: str = "2026-11-01T10:00:00Z",
    claims: list[JSON] | None = None,
    generated: list[JSON] | None = None,
    extended: JSON | None = None,
    containers: list[JSON] | None = None,
    statuses: list[JSON] | None = None,
    conditions: list[JSON] | None = None,
    gates: list[str] | None = None,
) -> tuple[str, JSON]:
    spec: JSON = {"containers": containers or [{"name": "main"}]}
    if node:
        spec["nodeName"] = node
    if claims:
        spec["resourceClaims"] = claims
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    status: JSON = {"phase": phase}
    if conditions:
        status["conditions"] = conditions
    if generated:
        status["resourceClaimStatuses"] = generated
    if extended:
        status["extendedResourceClaimStatus"] = extended
    if statuses:
        status["containerStatuses"] = statuses
    meta = f.meta(name, namespace=namespace, creationTimestamp=created)
    return ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})


@pytest.fixture
def pods() -> None:
    f.write(
        pod(
            "trainer-0", node="node-1", created="2026-11-03T10:00:00Z",
            claims=[{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
            generated=[{"name": "gpu", "resourceClaimName": "trainer-0-gpu-x7k2p"}],
            statuses=[{"name": "main", "ready": True, "restartCount": 0, "state": {"running": {}}}],
        ),
        pod(
            "trainer-1", node="node-2", created="2026-11-02T10:00:00Z",
            claims=[{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
            statuses=[{"name": "main", "ready": False, "restartCount": 5, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
        ),
        pod(
            "legacy-gpu", namespace="default", node="node-2", created="2026-11-01T10:00:00Z",
            containers=[{"name": "main", "resources": {"limits": {"example.com/gpu": "2"}}}],
            extended={"resourceClaimName": "legacy-gpu-extended-resources-abcde",
                      "requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                                           "requestName": "container-0-request-0"}]},
        ),
        pod("web", namespace="default", node="node-1", created="2026-11-04T10:00:00Z"),
        pod("too-big", namespace="research", phase="Pending", created="2026-11-05T10:00:00Z",
            claims=[{"name": "gpus", "resourceClaimName": "eight-gpus"}]),
        # the claims the pods name exist (a missing one: test_a_claim_the_mirror_does_not_hold_is_not_linked)
        ("resourceclaims", f.claim("trainer-0-gpu-x7k2p", namespace="ml")),
        ("resourceclaims", f.claim("legacy-gpu-extended-resources-abcde")),
        ("resourceclaims", f.claim("eight-gpus", namespace="research")),
    )  # fmt: skip


@pytest.fixture
def client_in(client: Client) -> Client:
    client.force_login(make_user())
    return client


def names(html: str) -> list[str]:
    return re.findall(r'<tr data-pod="[^/"]+/([^"]+)">', html)


def row(html: str, name: str) -> str:
    found = re.search(rf'<tr data-pod="[^/"]+/{re.escape(name)}">(.*?)</tr>', html, re.S)
    assert found, f"no row for {name}"
    return found.group(1)


def test_it_lists_every_pod_with_its_status_node_claims_extended_resources_and_age(
    client_in: Client, pods: None
) -> None:
    response = client_in.get(PODS)
    assert response.status_code == 200
    html = response.content.decode()
    assert names(html) == ["legacy-gpu", "web", "trainer-0", "trainer-1", "too-big"]  # namespace, then name
    trainer = row(html, "trainer-0")
    assert 'href="/pods/ml/trainer-0/"' in trainer
    assert 'href="/nodes/node-1/"' in trainer
    assert 'href="/claims/ml/trainer-0-gpu-x7k2p/"' in trainer
    assert (
        '<span class="badge ok"><bdi class="k8s word">Running</bdi></span>' in trainer
        and "1/1 ready" in trainer
    )
    assert '<time datetime="2026-11-03T10:00:00' in trainer
    crashing = row(html, "trainer-1")
    assert '<span class="badge bad"><bdi class="k8s word">CrashLoopBackOff</bdi></span>' in crashing
    assert "5 restarts" in crashing and "phase <bdi" in crashing
    assert "gpu</bdi>: not created yet" in crashing  # the template's claim is not made yet
    legacy = row(html, "legacy-gpu")
    assert (
        'href="/claims/default/legacy-gpu-extended-resources-abcde/"' in legacy
        and "extended resource" in legacy
    )
    assert "example.com/gpu</bdi>: 2" in legacy
    pending = row(html, "too-big")
    assert "not scheduled" in pending and '<span class="badge warn">' in pending
    assert 'href="/claims/research/eight-gpus/"' in pending
    assert "5 pods" in html and "1 Pending" in html and "4 Running" in html and "4 use DRA claims" in html


def test_a_claim_the_mirror_does_not_hold_is_named_not_linked(client_in: Client, pods: None) -> None:
    """A pod may name a ResourceClaim that does not exist (yet, or any more): its page would be a 404."""
    f.write(
        pod("waits", phase="Pending", claims=[{"name": "gpu", "resourceClaimName": "dataset-gpu"}]),
        pod("elsewhere", namespace="research", claims=[{"name": "gpu", "resourceClaimName": "trainer-0-gpu-x7k2p"}]),
    )  # fmt: skip
    html = client_in.get(PODS).content.decode()
    waits = row(html, "waits")
    assert "dataset-gpu" in waits and "not in the mirror" in waits
    assert 'href="/claims/ml/dataset-gpu/"' not in waits
    assert client_in.get("/claims/ml/dataset-gpu/").status_code == 404  # where the link led
    # the same claim name in another namespace is another claim
    elsewhere = row(html, "elsewhere")
    assert (
        "not in the mirror" in elsewhere and 'href="/claims/research/trainer-0-gpu-x7k2p/"' not in elsewhere
    )
    assert 'href="/claims/ml/trainer-0-gpu-x7k2p/"' in row(html, "trainer-0")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"namespace": "ml"}, ["trainer-0", "trainer-1"]),
        ({"node": "node-2"}, ["legacy-gpu", "trainer-1"]),
        ({"phase": "Pending"}, ["too-big"]),
        ({"uses_claims": "true"}, ["legacy-gpu", "trainer-0", "trainer-1", "too-big"]),
        ({"uses_claims": "false"}, ["web"]),
        ({"q": "train"}, ["trainer-0", "trainer-1"]),
        ({"q": "default/gpu"}, ["legacy-gpu"]),
        ({"namespace": "ml", "q": "-1"}, ["trainer-1"]),
    ],
)
def test_it_filters_by_namespace_node_phase_claims_and_name(
    client_in: Client, pods: None, params: dict[str, str], expected: list[str]
) -> None:
    html = client_in.get(PODS, params).content.decode()
    assert names(html) == expected
    for key, value in params.items():  # the form shows what is filtered
        assert f'value="{value}"' in html or f'<option value="{value}" selected>' in html, key


def test_it_sorts_every_page_on_the_server_by_the_column_asked_for(client_in: Client, pods: None) -> None:
    def order(sort: str) -> list[str]:
        return names(client_in.get(PODS, {"sort": sort}).content.decode())

    assert order("name") == ["legacy-gpu", "too-big", "trainer-0", "trainer-1", "web"]
    assert order("-name") == ["web", "trainer-1", "trainer-0", "too-big", "legacy-gpu"]
    assert order("age") == ["too-big", "web", "trainer-0", "trainer-1", "legacy-gpu"]  # youngest first
    assert order("status") == ["trainer-1", "too-big", "legacy-gpu", "web", "trainer-0"]
    assert order("-claims")[-1] == "web"
    assert order("node")[0] == "too-big"  # not scheduled: no node
    html = client_in.get(PODS, {"sort": "-age"}).content.decode()
    assert 'data-table="pods" data-sort-param="sort" data-sort-current="-age"' in html
    assert '<th data-sort-key="age" title="since the pod was created">Age</th>' in html
    assert '<input type="hidden" name="sort" value="-age">' in html  # filtering keeps the order


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"phase": "Sleeping"}, "<strong>Phase</strong> (<code>phase</code>)", "Select a valid choice"),
        (
            {"uses_claims": "maybe"},
            "<strong>Uses DRA claims</strong> (<code>uses_claims</code>)",
            "must be true or false",
        ),
        (
            {"sort": "colour"},
            "<code>sort</code>",
            "must be one of namespace, name, status, node, claims, age",
        ),
        (
            {"namespac": "ml"},
            "<code>namespac</code>",
            "not a filter of this page",
        ),
    ],
)
def test_it_refuses_a_bad_query_with_a_400_naming_the_parameter_and_lists_nothing(
    client_in: Client, pods: None, params: dict[str, str], field: str, message: str
) -> None:
    response = client_in.get(PODS, params)
    assert response.status_code == 400
    html = response.content.decode()
    assert re.search(rf"<li>{re.escape(field)}: [^<]*{re.escape(message)}", html), html[
        html.find("query-errors") :
    ][:300]
    assert names(html) == [] and "Nothing is listed while the query above is refused." in html
    fragment = client_in.get(PODS, {**params, "fragment": "table"})
    assert fragment.status_code == 400 and names(fragment.content.decode()) == []


def test_it_escapes_what_the_cluster_says(client_in: Client) -> None:
    hostile = "<script>alert(1)</script>"
    f.write(
        pod("odd", statuses=[{"name": "main", "state": {"waiting": {"reason": hostile}}}],
            claims=[{"name": "x", "resourceClaimName": '"><img src=x onerror=alert(2)>'}]),
    )  # fmt: skip
    html = client_in.get(PODS).content.decode()
    assert hostile not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html


def test_it_says_when_no_pod_matches_and_when_the_mirror_has_none(client_in: Client, pods: None) -> None:
    html = client_in.get(PODS, {"namespace": "nowhere"}).content.decode()
    assert "No pods match these filters." in html and 'href="/pods/">Show every pod</a>' in html
    f.replace("pods", [])
    assert "No pods in the mirror yet." in client_in.get(PODS).content.decode()


def test_it_pages_a_hundred_pods_at_a_time_in_as_many_queries_as_for_three(client_in: Client) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            client_in.get(PODS)
        return len(captured.captured_queries)

    f.write(*(pod(f"worker-{i:03d}", node="node-1") for i in range(3)))
    few = queries()
    f.write(*(pod(f"worker-{i:03d}", node="node-1") for i in range(3, 105)))
    assert queries() == few
    first = client_in.get(PODS).content.decode()
    assert len(names(first)) == 100 and "1–100 of 105" in first
    assert 'href="?page=2">Next →</a>' in first
    second = client_in.get(PODS, {"page": "2", "namespace": "ml"}).content.decode()
    assert names(second) == [f"worker-{i}" for i in range(100, 105)]


def test_its_table_refreshes_itself_when_pods_change(client_in: Client, pods: None) -> None:
    """The table is a live region of pods: the page re-fetches ?fragment=table when the mirror says so."""
    html = client_in.get(PODS, {"namespace": "ml"}).content.decode()
    assert re.search(
        r'id="pods-table" data-live-kinds="pods" hx-get="/pods/\?namespace=ml&amp;fragment=table"', html
    )
    f.write(pod("trainer-2", node="node-1"))
    fragment = client_in.get(PODS, {"namespace": "ml", "fragment": "table"})
    assert fragment.status_code == 200 and "<h1>" not in fragment.content.decode()
    assert names(fragment.content.decode()) == ["trainer-0", "trainer-1", "trainer-2"]


def test_the_nav_leads_to_it_next_to_the_other_lists(client_in: Client, pods: None) -> None:
    html = client_in.get(reverse("inventory:claims")).content.decode()
    assert re.search(r'href="/claims/" class="active">Claims</a>\s*<a href="/pods/" class="">Pods</a>', html)
    assert '<a href="/pods/" class="active">Pods</a>' in client_in.get(PODS).content.decode()
    assert '<a href="/pods/" class="active">Pods</a>' in client_in.get("/pods/ml/trainer-0/").content.decode()
