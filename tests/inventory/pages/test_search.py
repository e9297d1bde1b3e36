"""The search box: each kind found from one query, exact names first, caps with "N more", the API's
envelope, and hostile input that is neither an injection nor a 500."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from dradash.search import providers, search_groups
from inventory.models import Claim
from maintenance.models import Maintenance
from tests.inventory.pages_support import DRIVER, device, kube, make_user, small_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> dict[str, Any]:
    return small_world()


@pytest.fixture
def client_in(client: Client) -> Client:
    client.force_login(make_user())
    return client


@pytest.fixture
def api() -> APIClient:
    client = APIClient()
    client.force_authenticate(make_user("api-user"))
    return client


def kinds_found(query: str) -> dict[str, list[str]]:
    return {
        g.kind: [f"{h.namespace}/{h.name}" if h.namespace else h.name for h in g.hits]
        for g in search_groups(query=query, per_kind=10)
    }


def test_it_registers_a_provider_per_room_without_inventory_importing_maintenance() -> None:
    assert [p.kind for p in providers()] == [
        "pods",
        "claims",
        "nodes",
        "devices",
        "taint-rules",
        "maintenances",
    ]


def test_it_finds_each_kind(world: dict[str, Any]) -> None:
    Maintenance.objects.create(
        title="Swap PSU on node-1", reason="r", taint_key="k", target_effect="NoSchedule"
    )
    assert kinds_found("trainer") == {"pods": ["ml/trainer-0"]}
    assert kinds_found("train") == {"pods": ["ml/trainer-0"], "claims": ["ml/train"]}
    Claim.objects.create(uid="u-9", namespace="ml", name="worker-7-gpu-x1", owner_pod="worker-7")
    assert kinds_found("worker-7")["claims"] == ["ml/worker-7-gpu-x1"]
    assert kinds_found("node-2") == {"nodes": ["node-2"], "devices": ["gpu-0", "gpu-1"]}
    assert kinds_found("drain")["taint-rules"] == ["drain-gpu-1"]
    assert kinds_found("psu")["maintenances"] == ["Swap PSU on node-1"]
    assert kinds_found("nic.example")["devices"] == ["nic-0", "nic-1"]  # by driver


def test_it_finds_devices_by_an_attribute_value(world: dict[str, Any]) -> None:
    device("gpu-9", node="node-3", attributes={"uuid": {"string": "GPU-5f2c81aa"}})
    assert kinds_found("GPU-5f2c")["devices"] == ["gpu-9"]


def test_it_reads_namespace_slash_name_and_node_slash_device(world: dict[str, Any]) -> None:
    assert kinds_found("ml/trainer-0") == {"pods": ["ml/trainer-0"]}
    assert kinds_found("other/trainer-0") == {}
    assert kinds_found("node-2/gpu-1") == {"devices": ["gpu-1"]}
    assert kinds_found(f"{DRIVER}/node-1/gpu-0") == {"devices": ["gpu-0"]}


def test_it_puts_exact_names_first(world: dict[str, Any]) -> None:
    for name in ("gpu-0-spare", "agpu-0"):
        device(name, node="node-3")
    group = next(g for g in search_groups(query="gpu-0", per_kind=10) if g.kind == "devices")
    assert [h.name for h in group.hits][:2] == ["gpu-0", "gpu-0"] and all(h.exact for h in group.hits[:2])
    assert [h.name for h in group.hits][2:] == ["gpu-0-spare"] and not group.hits[2].exact
    # Names that start with the query are found through an index; a name only containing it is found
    # when nothing starts with the query.
    assert "agpu-0" not in [h.name for h in group.hits]
    assert kinds_found("pu-0")["devices"] == ["gpu-0", "gpu-0", "agpu-0", "gpu-0-spare"]  # by node, then name


def test_it_caps_each_kind_and_says_how_many_more(client_in: Client, world: dict[str, Any]) -> None:
    for i in range(25):
        kube("pods", f"worker-{i:02d}", {"spec": {"nodeName": "node-1"}}, namespace="batch")
    html = client_in.get(reverse("inventory:search"), {"q": "worker"}).content.decode()
    pods = html.split('id="search-pods"')[1].split("</section>")[0]
    assert pods.count('<li class="hit') == 10 and 'data-total="25"' in html
    assert "15 more Pods" in pods
    more = client_in.get(reverse("inventory:search"), {"q": "worker", "kind": "pods"}).content.decode()
    assert more.count('<li class="hit') == 25 and "more Pods" not in more


def test_it_links_each_hit_to_its_page(client_in: Client, world: dict[str, Any]) -> None:
    html = client_in.get(reverse("inventory:search"), {"q": "trainer-0"}).content.decode()
    assert f'href="{reverse("inventory:pod-detail", args=["ml", "trainer-0"])}"' in html
    html = client_in.get(reverse("inventory:search"), {"q": "node-1"}).content.decode()
    assert f'href="{reverse("inventory:node-detail", args=["node-1"])}"' in html
    assert f'href="/devices/{DRIVER}/node-1/gpu-0/"' in html


def test_the_search_box_is_in_every_page_header(client_in: Client, world: dict[str, Any]) -> None:
    html = client_in.get(reverse("inventory:overview")).content.decode()
    header = html.split("</header>")[0]
    assert 'id="search-box"' in header and f'action="{reverse("inventory:search")}"' in header


@pytest.mark.parametrize("query", ["%", "_", "' OR 1=1 --", "\\", "gpu%0", "<script>alert(1)</script>"])
def test_it_treats_hostile_queries_as_text(client_in: Client, world: dict[str, Any], query: str) -> None:
    response = client_in.get(reverse("inventory:search"), {"q": query})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="search-nothing"' in html  # no wildcard, no SQL: nothing is called like that
    assert "<script>alert(1)</script>" not in html


def test_it_ignores_control_characters_and_empty_queries(client_in: Client, world: dict[str, Any]) -> None:
    assert (
        'id="search-empty"' in client_in.get(reverse("inventory:search"), {"q": " \x07\n "}).content.decode()
    )
    assert kinds_found("node-\x002") == kinds_found("node-2")


def test_a_nul_character_in_the_query_is_a_400_naming_q(client_in: Client, world: dict[str, Any]) -> None:
    response = client_in.get(reverse("inventory:search"), {"q": "node-\x002"})
    assert (
        response.status_code == 400
        and "<code>q</code>: must not contain the NUL character" in response.content.decode()
    )


def test_an_unknown_kind_is_a_400_naming_it(client_in: Client, world: dict[str, Any]) -> None:
    response = client_in.get(reverse("inventory:search"), {"q": "x", "kind": "secrets"})
    assert response.status_code == 400 and "kind must be one of" in response.content.decode()


def test_the_api_pages_every_kind_in_the_one_envelope(api: APIClient, world: dict[str, Any]) -> None:
    for i in range(5):
        kube("pods", f"gpu-user-{i}", {"spec": {"nodeName": "node-2"}}, namespace="ml")
    body = api.get("/api/search/", {"q": "gpu", "limit": 4}).json()
    assert set(body) == {"count", "next", "previous", "results", "totals"}
    assert body["totals"]["pods"] == 5 and body["totals"]["devices"] == 4
    assert body["count"] == sum(body["totals"].values())
    seen = []
    url = "/api/search/?q=gpu&limit=4"
    while url:
        page = api.get(url).json()
        seen.extend((r["kind"], r["namespace"], r["name"], r["url"]) for r in page["results"])
        url = page["next"]
    assert len(seen) == body["count"] == len(set(seen))  # every hit once, kind after kind
    assert [k for k, *_ in seen][:5] == ["pods"] * 5


def test_the_api_filters_by_kind_and_refuses_bad_input(api: APIClient, world: dict[str, Any]) -> None:
    only = api.get("/api/search/", {"q": "train", "kind": "claims"}).json()
    assert [(r["kind"], r["name"], r["exact"]) for r in only["results"]] == [("claims", "train", True)]
    missing = api.get("/api/search/")
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "q"
    bad = api.get("/api/search/", {"q": "x", "kind": "secrets"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "kind"
    assert api.post("/api/search/", {"q": "x"}, format="json").status_code == 405


def test_it_counts_claims_from_the_claim_rows(world: dict[str, Any]) -> None:
    Claim.objects.create(uid="u-2", namespace="research", name="train-2", state="pending")
    assert kinds_found("research/")["claims"] == ["research/train-2"]


def test_a_query_that_finds_no_device_reads_the_devices_once(world: dict[str, Any]) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assert kinds_found("zz-no-such-thing") == {}
    scans = [q["sql"] for q in queries if '"inventory_device"' in q["sql"] and "LIKE '%" in q["sql"]]
    assert len(scans) == 1, scans


def test_devices_found_by_attribute_only_when_no_name_contains_the_query(
    api: APIClient, world: dict[str, Any]
) -> None:
    # "ab12" is in one device's name (tier 2) and in two devices' attribute values (tier 3).
    device("xab12y", node="node-3")
    device("gpu-7", node="node-3", attributes={"uuid": {"string": "ab12-ff"}})
    device("gpu-8", node="node-3", attributes={"serial": {"string": "ab12-00"}})
    assert kinds_found("ab12")["devices"] == ["xab12y"]
    body = api.get("/api/search/", {"q": "ab12", "kind": "devices", "limit": 1, "offset": 1}).json()
    assert body["count"] == 1 and body["results"] == []
    assert kinds_found("ab12-")["devices"] == ["gpu-7", "gpu-8"]
    page = api.get("/api/search/", {"q": "ab12-", "kind": "devices", "limit": 1, "offset": 1}).json()
    assert page["count"] == 2 and [h["name"] for h in page["results"]] == ["gpu-8"]


def test_an_exact_hit_reads_as_its_name_then_a_separate_badge(
    client_in: Client, world: dict[str, Any]
) -> None:
    html = client_in.get(reverse("inventory:search"), {"q": "gpu-0"}).content.decode()
    hit = re.search(r'<li class="hit exact">(.*?)</li>', html, re.S)
    assert hit, html
    text = re.sub(r"<[^>]+>", "", hit[1])
    assert text.startswith("gpu-0 exact match"), text  # not "gpu-0exact"
    assert (
        " free" not in text and "unallocated" in html
    )  # "free" means allocatable now; a device no claim holds is "unallocated"
