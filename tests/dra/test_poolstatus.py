"""A pool's ResourcePoolStatusRequest entry: counts, the partition summary and the shareable summary."""

from __future__ import annotations

from typing import Any

from dra.objects import pool_state
from dra.poolstatus import pool_status_entry

DRIVER = "gpu.example.com"


def mig_slice(*, partition_attribute: str | None = None) -> dict[str, Any]:
    """One A100 (a counter set of 7 slices) published as the full GPU, two 3g and seven 1g partitions."""

    def device(name: str, profile: str, slices: int) -> dict[str, Any]:
        return {
            "name": name,
            "attributes": {"profile": {"string": profile}},
            "consumesCounters": [
                {"counterSet": "gpu-0-counters", "counters": {"slices": {"value": str(slices)}}}
            ],
        }

    devices = [device("gpu-0", "full", 7)]
    devices += [device(f"gpu-0-3g-{i}", "3g.20gb", 3) for i in range(2)]
    devices += [device(f"gpu-0-1g-{i}", "1g.5gb", 1) for i in range(7)]
    spec: dict[str, Any] = {
        "driver": DRIVER,
        "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": 2},
        "nodeName": "node-0",
        "devices": devices,
    }
    if partition_attribute:
        spec["partitionTypeAttribute"] = partition_attribute
    counters = {
        "driver": DRIVER,
        "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": 2},
        "nodeName": "node-0",
        "sharedCounters": [{"name": "gpu-0-counters", "counters": {"slices": {"value": "7"}}}],
    }
    return {"devices": {"metadata": {"name": "node-0-a"}, "spec": spec}, "counters": {"metadata": {"name": "node-0-b"}, "spec": counters}}  # fmt: skip


def result(device: str, **extra: Any) -> dict[str, Any]:
    return {"request": "r", "driver": DRIVER, "pool": "node-0", "device": device, **extra}


def entry_of(slices: dict[str, Any], results: dict[str, list[dict[str, Any]]], **kw: Any) -> dict[str, Any]:
    state = pool_state(DRIVER, "node-0", [slices["devices"], slices["counters"]])
    return pool_status_entry(state, results=results, **kw)


def test_a_used_3g_partition_makes_the_full_gpu_and_the_other_partitions_that_no_longer_fit_unavailable() -> (
    None
):
    entry = entry_of(
        mig_slice(partition_attribute="gpu.example.com/profile"), {"gpu-0-3g-0": [result("gpu-0-3g-0")]}
    )

    # 4 of 7 slices left: the full GPU (7) cannot be given, the other 3g (3) and every 1g (1) can.
    assert entry["totalDevices"] == 10
    assert entry["allocatedDevices"] == 1
    assert entry["unavailableDevices"] == 1
    assert entry["availableDevices"] == 8
    assert entry["partitionSummary"] == [
        {"attribute": "gpu.example.com/profile", "type": "1g.5gb", "total": 7, "allocatable": 7},
        {"attribute": "gpu.example.com/profile", "type": "3g.20gb", "total": 2, "allocatable": 1},
        {"attribute": "gpu.example.com/profile", "type": "full", "total": 1, "allocatable": 0},
    ]
    assert "shareableSummary" not in entry


def test_the_request_default_groups_partitions_only_when_the_slice_names_no_attribute() -> None:
    plain = entry_of(mig_slice(), {})
    assert "partitionSummary" not in plain

    grouped = entry_of(mig_slice(), {}, default_partition_attribute="gpu.example.com/profile")
    assert [(p["type"], p["total"], p["allocatable"]) for p in grouped["partitionSummary"]] == [
        ("1g.5gb", 7, 7), ("3g.20gb", 2, 2), ("full", 1, 1),
    ]  # fmt: skip

    # The slice's own attribute wins over the request's default.
    mine = entry_of(
        mig_slice(partition_attribute="gpu.example.com/profile"), {}, default_partition_attribute="x.io/y"
    )
    assert {p["attribute"] for p in mine["partitionSummary"]} == {"gpu.example.com/profile"}


def test_a_rule_taint_makes_a_free_device_unavailable_and_admin_access_does_not_allocate() -> None:
    rule = {
        "metadata": {"name": "drain-1g-0"},
        "spec": {"deviceSelector": {"driver": DRIVER, "pool": "node-0", "device": "gpu-0-1g-0"},
                 "taint": {"key": "maintenance", "effect": "NoSchedule"}},
    }  # fmt: skip
    informational = {
        "metadata": {"name": "note"},
        "spec": {"deviceSelector": {"device": "gpu-0-1g-1"}, "taint": {"key": "note", "effect": "None"}},
    }
    entry = entry_of(
        mig_slice(), {"gpu-0-1g-2": [result("gpu-0-1g-2", adminAccess=True)]}, rules=[rule, informational]
    )

    assert entry["allocatedDevices"] == 0
    assert entry["unavailableDevices"] == 1  # the NoSchedule rule; an effect None taint does not block
    assert entry["availableDevices"] == 9


def test_shareable_devices_report_what_their_allocations_consume() -> None:
    spec = {
        "driver": DRIVER,
        "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-0",
        "devices": [
            {"name": f"gpu-{i}", "allowMultipleAllocations": True, "capacity": {"memory": {"value": "80Gi"}}}
            for i in range(3)
        ],
    }
    state = pool_state(DRIVER, "node-0", [{"metadata": {"name": "s"}, "spec": spec}])
    entry = pool_status_entry(
        state,
        results={
            "gpu-0": [result("gpu-0", consumedCapacity={"memory": "20Gi"}), result("gpu-0", consumedCapacity={"memory": "20Gi"})],
            "gpu-1": [result("gpu-1")],  # no consumedCapacity: the whole device
        },
    )  # fmt: skip

    assert entry["shareableSummary"] == {
        "fullyAvailableDevices": 1,
        "partiallyAvailableDevices": 1,
        "capacity": [{"name": "memory", "total": "240Gi", "consumed": "120Gi", "available": "120Gi"}],
    }


def test_an_incomplete_pool_reports_why_and_no_counts() -> None:
    slices = mig_slice()
    state = pool_state(DRIVER, "node-0", [slices["devices"]])
    entry = pool_status_entry(state, results={})
    assert entry["validationError"] == "incomplete pool: 1 of 2 slices published"
    assert "totalDevices" not in entry and "partitionSummary" not in entry
