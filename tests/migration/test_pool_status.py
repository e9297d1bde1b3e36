"""Pool availability snapshots (issue 13, item 3): ResourcePoolStatusRequests created, refreshed and deleted
from the UI and the API against simcluster, whose controller fills the status; each pool beside dradash's
own figures."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.maintenance.conftest import user_in

pytestmark = pytest.mark.django_db


def _settle(cluster: Any) -> None:
    assert cluster.controllers.wait_idle(60)


@pytest.fixture
def operator_api(mirrored: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(user_in("operator", "olivia-rpsr"))
    return api


def test_an_operator_creates_a_snapshot_the_controller_fills_and_it_agrees_with_dradash(
    mirrored: Any, operator_api: APIClient
) -> None:
    created = operator_api.post("/api/migration/pool-status/", {"driver": "gpu.example.com"}, format="json")
    assert created.status_code == 201, created.content
    name = created.json()["metadata"]["name"]
    assert name.startswith("dradash-")
    assert created.json()["apiVersion"] == "resource.k8s.io/v1alpha3"
    _settle(mirrored)
    mirrored.sync()

    snapshot = operator_api.get(f"/api/migration/pool-status/{name}/").json()
    assert snapshot["complete"] is True
    assert snapshot["status"]["poolCount"] == 3  # node-0..2 of the tiny topology
    assert [c["type"] for c in snapshot["status"]["conditions"]] == ["Complete"]
    for row in snapshot["comparison"]:
        assert row["dradash"]["found"], row
        assert row["snapshot"]["totalDevices"] == row["dradash"]["totalDevices"], row
        assert row["snapshot"]["allocatedDevices"] == row["dradash"]["allocatedDevices"], row
        assert "gpu.example.com" in row["dradash"]["freeByClass"]

    client = Client()
    client.force_login(user_in("operator", "oscar-rpsr"))
    page = client.get("/migration/pool-status/")
    html = page.content.decode()
    assert page.status_code == 200
    assert f'data-name="{name}" data-complete="true"' in html
    assert html.count('data-pool="node-') == 3
    assert "DRAResourcePoolStatus" in html
    assert "style=" not in html and "<script>" not in html

    # refresh: the one-shot request is deleted and created anew
    refreshed = client.post("/migration/pool-status/", {"action": "refresh", "name": name})
    assert refreshed.status_code == 302
    _settle(mirrored)
    mirrored.sync()
    names = [s["name"] for s in operator_api.get("/api/migration/pool-status/").json()["items"]]
    assert len(names) == 1 and names[0] != name and names[0].startswith("dradash-")

    deleted = operator_api.delete(f"/api/migration/pool-status/{names[0]}/")
    assert deleted.status_code == 204
    mirrored.sync()
    assert operator_api.get("/api/migration/pool-status/").json()["items"] == []


def test_one_pool_with_a_limit_and_bad_input_naming_the_field(mirrored: Any, operator_api: APIClient) -> None:
    created = operator_api.post(
        "/api/migration/pool-status/",
        {"driver": "gpu.example.com", "poolName": "node-1", "limit": 5},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["spec"] == {"driver": "gpu.example.com", "poolName": "node-1", "limit": 5}
    _settle(mirrored)
    mirrored.sync()
    (snapshot,) = operator_api.get("/api/migration/pool-status/").json()["items"]
    assert [p["poolName"] for p in snapshot["status"]["pools"]] == ["node-1"]

    for body, field in [
        ({}, "driver"),
        ({"driver": "Not_A_Driver"}, "driver"),
        ({"driver": "gpu.example.com", "limit": 0}, "limit"),
        ({"driver": "gpu.example.com", "limit": "many"}, "limit"),
        ({"driver": "gpu.example.com", "poolName": "/bad"}, "poolName"),
        ({"driver": "gpu.example.com", "pool": "x"}, "pool"),
    ]:
        answer = operator_api.post("/api/migration/pool-status/", body, format="json")
        assert answer.status_code == 400, (body, answer.content)
        assert answer.json()["errors"][0]["field"] == field, body


def test_every_bad_field_is_named_at_once_by_the_api_and_the_form(
    mirrored: Any, operator_api: APIClient
) -> None:
    answer = operator_api.post(
        "/api/migration/pool-status/", {"limit": 5000, "poolName": "/bad"}, format="json"
    )
    assert answer.status_code == 400
    assert [e["field"] for e in answer.json()["errors"]] == ["driver", "poolName", "limit"]

    client = Client()
    client.force_login(user_in("operator", "otto-form"))
    page = client.post("/migration/pool-status/", {"action": "create", "driver": "", "limit": "5000"})
    assert page.status_code == 400
    html = page.content.decode()
    assert "<strong>Driver</strong> (<code>driver</code>): is required" in html
    assert "<strong>Limit</strong> (<code>limit</code>): must be between 1 and" in html


def test_viewers_see_snapshots_but_may_not_create_them(mirrored: Any) -> None:
    api = APIClient()
    api.force_authenticate(user_in("viewer", "vic-rpsr"))
    assert api.get("/api/migration/pool-status/").status_code == 200
    assert (
        api.post("/api/migration/pool-status/", {"driver": "gpu.example.com"}, format="json").status_code
        == 403
    )
    client = Client()
    client.force_login(user_in("viewer", "val-rpsr"))
    page = client.get("/migration/pool-status/").content.decode()
    assert 'id="pool-status-form"' not in page
    refused = client.post("/migration/pool-status/", {"action": "create", "driver": "gpu.example.com"})
    assert refused.status_code == 403


def test_a_snapshot_groups_partitions_by_the_requested_attribute_and_the_page_shows_them(
    mirrored: Any, operator_api: APIClient
) -> None:
    from tests.dra.test_poolstatus import mig_slice

    slices = mig_slice()
    for key in ("devices", "counters"):
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", **slices[key]}
        body["spec"] = {**body["spec"], "driver": "mig.example.com", "nodeName": "node-0"}
        body["spec"]["pool"] = {**body["spec"]["pool"], "name": "a100"}
        mirrored.store.create("resourceslices", body)
    created = operator_api.post(
        "/api/migration/pool-status/",
        {"driver": "mig.example.com", "defaultPartitionTypeAttribute": "mig.example.com/profile"},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["spec"]["defaultPartitionTypeAttribute"] == "mig.example.com/profile"
    _settle(mirrored)
    mirrored.sync()

    (snapshot,) = operator_api.get("/api/migration/pool-status/").json()["items"]
    (pool,) = snapshot["status"]["pools"]
    assert [(p["type"], p["total"], p["allocatable"]) for p in pool["partitionSummary"]] == [
        ("1g.5gb", 7, 7), ("3g.20gb", 2, 2), ("full", 1, 1),
    ]  # fmt: skip

    client = Client()
    client.force_login(user_in("operator", "oscar-parts"))
    html = client.get("/migration/pool-status/").content.decode()
    assert "Partitions by type" in html
    assert 'data-pool="a100" data-type="3g.20gb"' in html

    for bad in ("profile", "mig.example.com/not-an-identifier", "a/b/c"):
        answer = operator_api.post(
            "/api/migration/pool-status/",
            {"driver": "mig.example.com", "defaultPartitionTypeAttribute": bad},
            format="json",
        )
        assert answer.status_code == 400, (bad, answer.content)
        assert answer.json()["errors"][0]["field"] == "defaultPartitionTypeAttribute"


def test_the_page_warns_when_the_driver_has_no_pools_in_the_inventory(mirrored: Any) -> None:
    client = Client()
    client.force_login(user_in("operator", "otto-typo"))
    page = client.post(
        "/migration/pool-status/", {"action": "create", "driver": "nope.example.com"}, follow=True
    )
    html = page.content.decode()
    assert page.status_code == 200
    assert "has no pools of driver nope.example.com" in html and 'class="alert warn"' in html
    known = client.post(
        "/migration/pool-status/", {"action": "create", "driver": "gpu.example.com"}, follow=True
    )
    assert "has no pools of driver" not in known.content.decode()
