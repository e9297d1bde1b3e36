"""A pool status request's `limit` is a whole number written in decimal digits, 1..1000: `1.9` was read as 1
and `1_0` as 10 (Python's int() takes both). A refresh creates the new request before deleting the old, so a
failed create leaves the previous result in place. No cluster here: a fake client records the calls."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from inventory.kube import KubeError
from migration import pool_status
from migration.pool_status import (
    PoolStatusInputError,
    PoolStatusWriteError,
    pool_status_refresh,
    pool_status_spec,
)
from tests.inventory.pages_support import kube
from tests.maintenance.conftest import user_in

pytestmark = pytest.mark.django_db

DRIVER = "gpu.example.com"
BAD_LIMITS = [
    "1.9",
    1.9,
    10.0,
    "1_0",
    "1e2",
    "+5",
    " 5",
    "5 ",
    "0x10",
    "١٠",
    "",
    "-1",
    "0",
    0,
    1001,
    "1001",
    True,
]


@pytest.mark.parametrize("limit", [1, 5, 1000, "1", "05", "1000"])
def test_it_takes_a_limit_written_in_decimal_digits_within_range(limit: Any) -> None:
    assert pool_status_spec(driver=DRIVER, limit=limit)["limit"] == int(limit)


@pytest.mark.parametrize("limit", [limit for limit in BAD_LIMITS if limit != ""])
def test_it_refuses_a_limit_that_is_not_a_whole_decimal_number_in_range_naming_limit_and_the_range(
    limit: Any,
) -> None:
    with pytest.raises(PoolStatusInputError) as refused:
        pool_status_spec(driver=DRIVER, limit=limit)
    assert refused.value.field == "limit"
    assert "between 1 and 1000" in refused.value.message, refused.value.message


def test_it_leaves_an_empty_limit_to_the_default() -> None:
    assert "limit" not in pool_status_spec(driver=DRIVER, limit="")


def test_the_api_and_the_form_answer_400_naming_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_status, "cluster_client", lambda: pytest.fail("the cluster must not be asked"))
    api = APIClient()
    api.force_authenticate(user_in("operator", "olga-limit"))
    for limit in ("1_0", 1.9, "1.9"):
        answer = api.post("/api/migration/pool-status/", {"driver": DRIVER, "limit": limit}, format="json")
        assert answer.status_code == 400, answer.content
        assert answer.json()["errors"][0]["field"] == "limit"
        assert "between 1 and 1000" in answer.json()["errors"][0]["message"]

    client = Client()
    client.force_login(user_in("operator", "omar-limit"))
    page = client.post("/migration/pool-status/", {"action": "create", "driver": DRIVER, "limit": "1_0"})
    assert page.status_code == 400
    assert "<strong>Limit</strong> (<code>limit</code>): must be between 1 and 1000" in page.content.decode()


class FakeCluster:
    """Records creates and deletes; `fail_create` / `fail_delete` make that call fail as the API server would."""

    def __init__(self, *, fail_create: bool = False, fail_delete: bool = False) -> None:
        self.fail_create = fail_create
        self.fail_delete = fail_delete
        self.calls: list[tuple[str, str]] = []

    def create_object(self, kind: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        if self.fail_create:
            raise KubeError(500, "InternalError", "etcdserver: request timed out")
        self.calls.append(("create", body["metadata"]["generateName"]))
        return {**body, "metadata": {"name": "dradash-new", "uid": "uid-new"}}

    def delete_object(self, kind: str, name: str, **kwargs: Any) -> dict[str, Any]:
        if self.fail_delete:
            raise KubeError(500, "InternalError", "etcdserver: request timed out")
        self.calls.append(("delete", name))
        return {}


@pytest.fixture
def old_request() -> None:
    spec = {"driver": DRIVER, "poolName": "node-1", "limit": 5}
    status = {"poolCount": 1, "pools": [{"driver": DRIVER, "poolName": "node-1", "totalDevices": 2}]}
    kube("resourcepoolstatusrequests", "dradash-old", {"spec": spec, "status": status}, uid="uid-old")


def test_a_refresh_that_cannot_create_leaves_the_previous_result_in_place(
    monkeypatch: pytest.MonkeyPatch, old_request: None
) -> None:
    cluster = FakeCluster(fail_create=True)
    monkeypatch.setattr(pool_status, "cluster_client", lambda: cluster)
    with pytest.raises(PoolStatusWriteError) as failed:
        pool_status_refresh(name="dradash-old", user=user_in("operator", "oona"))
    assert failed.value.status == 500
    assert cluster.calls == []  # nothing deleted: the old request and its status are still there


def test_a_refresh_creates_the_new_request_then_deletes_the_old(
    monkeypatch: pytest.MonkeyPatch, old_request: None
) -> None:
    cluster = FakeCluster()
    monkeypatch.setattr(pool_status, "cluster_client", lambda: cluster)
    created = pool_status_refresh(name="dradash-old", user=user_in("operator", "otis"))
    assert created["spec"] == {"driver": DRIVER, "poolName": "node-1", "limit": 5}
    assert cluster.calls == [("create", "dradash-"), ("delete", "dradash-old")]


def test_a_refresh_whose_delete_fails_says_both_requests_exist(
    monkeypatch: pytest.MonkeyPatch, old_request: None
) -> None:
    cluster = FakeCluster(fail_delete=True)
    monkeypatch.setattr(pool_status, "cluster_client", lambda: cluster)
    with pytest.raises(PoolStatusWriteError) as failed:
        pool_status_refresh(name="dradash-old", user=user_in("operator", "opal"))
    assert cluster.calls == [("create", "dradash-")]
    assert "created dradash-new" in failed.value.message and "dradash-old" in failed.value.message


@pytest.mark.parametrize("driver", [["gpu.example.com"], {"name": "gpu.example.com"}, 7, True])
def test_it_says_a_driver_that_is_not_a_string_is_not_a_string_rather_than_missing(driver: Any) -> None:
    with pytest.raises(PoolStatusInputError) as caught:
        pool_status_spec(driver=driver)
    assert caught.value.errors == [
        ("driver", f"must be a string (a driver name), got {type(driver).__name__}")
    ]


@pytest.mark.parametrize("driver", [None, "", "  "])
def test_it_still_says_a_missing_driver_is_required(driver: Any) -> None:
    with pytest.raises(PoolStatusInputError) as caught:
        pool_status_spec(driver=driver)
    assert caught.value.errors == [("driver", "is required — the driver whose pools to summarize")]
