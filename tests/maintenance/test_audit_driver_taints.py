"""Device taints a driver publishes in its ResourceSlices (driver-reported faults) enter the audit log
when the mirror sees them appear and disappear, attributed to the driver."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from maintenance.models import AuditEntry

pytestmark = pytest.mark.django_db(transaction=True)  # the mirror's hook runs after its commits


def gpu_slices(cluster: Any, node: str) -> list[dict[str, Any]]:
    """The pool's slices that list devices (a pool may also have a slice of shared counters only)."""
    return [
        s for s in cluster.store.list("resourceslices")
        if s["spec"]["driver"] == "gpu.example.com" and s["spec"]["pool"]["name"] == node and s["spec"].get("devices")
    ]  # fmt: skip


def set_taints(cluster: Any, node: str, taints: dict[str, list[dict[str, Any]]]) -> None:
    for original in gpu_slices(cluster, node):
        slice_ = copy.deepcopy(original)
        for device in slice_["spec"]["devices"]:
            device.pop("taints", None)
            if device["name"] in taints:
                device["taints"] = taints[device["name"]]
        cluster.store.update("resourceslices", slice_)


def test_it_records_driver_taints_appearing_and_disappearing(mirrored: Any) -> None:
    fault = {"key": "gpu.example.com/ecc-errors", "value": "uncorrectable", "effect": "NoExecute"}
    set_taints(mirrored, "node-1", {"gpu-2": [fault]})
    mirrored.sync()
    added = AuditEntry.objects.get(action="driver-taint")
    assert (added.actor, added.source, added.subject, added.effect) == (
        "gpu.example.com", "cluster", "gpu.example.com/node-1/gpu-2", "NoExecute")  # fmt: skip
    assert "gpu.example.com/ecc-errors=uncorrectable:NoExecute" in added.message and "node-1" in added.message

    mirrored.sync()  # nothing new
    set_taints(mirrored, "node-1", {"gpu-2": [fault]})  # the same taints again (a new resourceVersion)
    mirrored.sync()
    assert AuditEntry.objects.filter(action="driver-taint").count() == 1

    set_taints(mirrored, "node-1", {})
    mirrored.sync()
    removed = AuditEntry.objects.get(action="driver-untaint")
    assert removed.subject == "gpu.example.com/node-1/gpu-2" and removed.actor == "gpu.example.com"


def test_it_summarises_a_taint_on_many_devices_in_one_entry(mirrored: Any) -> None:
    fault = {"key": "gpu.example.com/firmware", "effect": "NoSchedule"}
    for node in ("node-0", "node-1", "node-2"):
        names = [d["name"] for s in gpu_slices(mirrored, node) for d in s["spec"]["devices"]]
        set_taints(mirrored, node, {name: [fault] for name in names})
    mirrored.sync()
    entries = AuditEntry.objects.filter(action="driver-taint")
    assert entries.count() == 1
    assert entries[0].subject.endswith("devices of gpu.example.com")
    assert len(entries[0].outcome["devices"]) > 10
