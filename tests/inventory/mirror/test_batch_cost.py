"""A watch batch costs what it changed, not what the cluster holds: a batch of hundreds of changed claims or
pods reads the rows they name, never a whole table, and a rule change recomputes only its devices."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.mirror.derive import taints as derive_taints
from inventory.mirror.writer import BatchWriter, Event
from inventory.models import Device
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db

POOLS = 340  # more than the old 300-key threshold above which the mirror loaded whole tables
ROW_TABLES = ("inventory_device", "inventory_allocation", "inventory_pool")


def _cluster() -> None:
    slices = [
        f.resource_slice(
            f"s{i}", pool=f"node-{i}", node=f"node-{i}", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")]
        )
        for i in range(POOLS)
    ]
    f.write(*[("resourceslices", s) for s in slices])


def _unkeyed_reads(queries: list[dict[str, Any]]) -> list[str]:
    """SELECTs from a derived-row table without a WHERE clause: a full-table read."""
    found = []
    for query in queries:
        sql = query["sql"]
        if not sql.lstrip().upper().startswith("SELECT"):
            continue
        for table in ROW_TABLES:
            if re.search(rf'FROM "?{table}"?(\s|$)', sql) and " WHERE " not in sql.upper():
                found.append(sql[:200])
    return found


def test_it_reads_only_the_named_rows_for_a_batch_of_hundreds_of_claims() -> None:
    _cluster()
    claims = [f.claim(f"c{i}", results=[f.result("gpu-0", pool=f"node-{i}")]) for i in range(POOLS - 20)]
    writer = BatchWriter()
    with CaptureQueriesContext(connection) as captured:
        writer.apply([Event("resourceclaims", "ADDED", c, "10") for c in claims], defer=True)

    assert _unkeyed_reads(captured.captured_queries) == []
    # The claims' devices are allocated; the pools no claim touched are not.
    assert Device.objects.filter(allocation_state="allocated").count() == POOLS - 20
    assert not Device.objects.filter(pool=f"node-{POOLS - 1}", allocation_state="allocated").exists()


def test_it_reads_only_the_named_rows_for_a_batch_of_hundreds_of_pods_reporting_health() -> None:
    _cluster()
    pods = []
    for i in range(POOLS - 20):
        pod_meta = f.meta(f"p{i}", namespace="default")
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": pod_meta,
                "spec": {"nodeName": f"node-{i}", "containers": [{"name": "main"}]},
                "status": {
                    "containerStatuses": [
                        {
                            "name": "main",
                            "allocatedResourcesStatus": [
                                {
                                    "name": "claim:gpu",
                                    "resources": [
                                        {
                                            "resourceID": f"gpu.example.com/node-{i}/gpu-1",
                                            "health": "Unhealthy",
                                        }
                                    ],
                                }
                            ],
                        }
                    ]
                },
            }
        )
    writer = BatchWriter()
    writer._reporting = {}  # as after the initial sync: the scan of existing reports is not this batch's
    with CaptureQueriesContext(connection) as captured:
        writer.apply([Event("pods", "ADDED", p, "20") for p in pods], defer=True)

    assert _unkeyed_reads(captured.captured_queries) == []
    assert Device.objects.filter(health="Unhealthy").count() == POOLS - 20
    assert set(Device.objects.filter(health="Unhealthy").values_list("name", flat=True)) == {"gpu-1"}


def test_it_recomputes_only_the_devices_a_changed_rule_selects(monkeypatch: pytest.MonkeyPatch) -> None:
    _cluster()
    other = f.taint_rule("other", selector={"pool": "node-7"}, effect="NoExecute")
    rule = f.taint_rule("one-pool", selector={"pool": "node-3"})
    f.write(("devicetaintrules", other), ("devicetaintrules", rule))
    recomputed: list[tuple[str, str]] = []
    real = derive_taints.fill_taints

    def spy(row: Device, ctx: Any) -> None:
        recomputed.append((row.pool, row.name))
        real(row, ctx)

    monkeypatch.setattr(derive_taints, "fill_taints", spy)
    moved = {**rule, "metadata": {**rule["metadata"], "resourceVersion": "30"}}
    moved["spec"] = {**rule["spec"], "deviceSelector": {"pool": "node-5", "device": "gpu-1"}}
    BatchWriter().apply([Event("devicetaintrules", "MODIFIED", moved, "30")])

    # The old selection (node-3's two GPUs) and the new one (node-5/gpu-1), nothing else.
    assert sorted(recomputed) == [("node-3", "gpu-0"), ("node-3", "gpu-1"), ("node-5", "gpu-1")]
    assert not f.device("gpu-0", pool="node-3").tainted
    assert [t["rule"] for t in f.device("gpu-1", pool="node-5").taints] == ["one-pool"]
    assert [t["rule"] for t in f.device("gpu-0", pool="node-7").taints] == ["other"]


def test_it_applies_a_thousand_rules_in_one_batch() -> None:
    _cluster()
    rules = [f.taint_rule(f"r{i:04d}", selector={"pool": f"node-{i % POOLS}"}) for i in range(1001)]
    rules.append(f.taint_rule("one-device", selector={"pool": "node-9", "device": "gpu-1"}))

    BatchWriter().apply([Event("devicetaintrules", "ADDED", r, "40") for r in rules])

    # SQLite refuses an OR of a thousand selectors (expression tree deeper than 1,000): they are merged.
    assert Device.objects.filter(tainted=True).count() == 2 * POOLS
    assert len(f.device("gpu-1", pool="node-9").taints) == 4  # r0009, r0349, r0689 and one-device


def test_it_recomputes_a_pools_availability_only_when_which_claim_holds_its_devices_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A claim's reservedFor and its driver's device status change several times in its life (four writes
    per pod in a burst); what one-device claims could still get from the pool does not. Moving the claim
    to another device, or freeing it, does."""
    from inventory.mirror import writer as writer_module
    from inventory.selectors.classes import class_overview

    f.write(
        ("deviceclasses", f.device_class("gpu.example.com")),
        ("nodes", f.node("node-0")),
        ("resourceslices", f.resource_slice("s0", pool="node-0", node="node-0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])),
    )  # fmt: skip
    claim = f.claim("train", results=[f.result("gpu-0")])
    f.write(("resourceclaims", claim))
    recomputed: list[set[str]] = []
    real = writer_module.recompute_availability

    def spy(pool_keys: Any, ctx: Any) -> None:
        recomputed.append(set(pool_keys))
        real(pool_keys, ctx)

    monkeypatch.setattr(writer_module, "recompute_availability", spy)

    def free() -> int:
        return next(c for c in class_overview().classes if c.name == "gpu.example.com").free

    def modified(rv: int, status: dict[str, Any]) -> Event:
        obj = {**claim, "metadata": {**claim["metadata"], "resourceVersion": str(rv)}, "status": status}
        return Event("resourceclaims", "MODIFIED", obj, str(rv))

    allocation = claim["status"]["allocation"]
    reserved = {
        "allocation": allocation,
        "reservedFor": [{"resource": "pods", "name": "train-0", "uid": "u-1"}],
    }
    BatchWriter().apply([modified(2, reserved)])
    ready = {**reserved, "devices": [{"driver": "gpu.example.com", "pool": "node-0", "device": "gpu-0",
                                      "conditions": [{"type": "Ready", "status": "True"}]}]}  # fmt: skip
    BatchWriter().apply([modified(3, ready)])

    assert recomputed == []
    # The device rows still follow both changes: the pod it serves, the driver's condition.
    row = f.device("gpu-0")
    assert [p["name"] for p in row.allocations[0]["pods"]] == ["train-0"]
    assert row.statuses[0]["conditions"] == [{"type": "Ready", "status": "True"}]
    assert free() == 1

    BatchWriter().apply([modified(4, {"allocation": {"devices": {"results": [f.result("gpu-1")]}}})])
    assert recomputed == [{"gpu.example.com/node-0"}]
    assert f.device("gpu-1").blocked == "in-use" and f.device("gpu-0").blocked == ""
    assert free() == 1

    BatchWriter().apply([modified(5, {})])
    assert recomputed == [{"gpu.example.com/node-0"}] * 2
    assert free() == 2
