"""The Devices list and one device's detail."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from inventory.filters import DeviceFilterSet
from inventory.models import Device, KubeObject, Pool
from inventory.selectors.common import CLASSES, InvalidFilters
from inventory.selectors.pools import pool_counters_left


def device_filterset(*, filters: Mapping[str, Any] | None) -> DeviceFilterSet:
    """The bound FilterSet (the pages render its form)."""
    return DeviceFilterSet(data=filters or {}, queryset=Device.objects.all())


def device_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[Device]:
    """Devices matching the filters; one query whatever the number of rows (all shown fields are columns)."""
    filterset = device_filterset(filters=filters)
    if not filterset.is_valid():
        raise InvalidFilters(filterset.errors)
    return filterset.qs.order_by("driver", "pool", "name")


@dataclass
class DeviceDetail:
    device: Device
    slice: KubeObject | None
    claims: list[KubeObject]
    pods: list[KubeObject]
    rules: list[KubeObject]  # DeviceTaintRules that select the device
    pool: Pool | None
    counters_left: dict[str, dict[str, str]] = field(default_factory=dict)


def device_get(*, driver: str, pool: str, name: str) -> Device:
    return Device.objects.get(driver=driver, pool=pool, name=name)


def device_detail(*, device: Device) -> DeviceDetail:
    slice_obj = KubeObject.objects.filter(kind="resourceslices", uid=device.slice_uid).first()
    claim_uids = [a["claimUid"] for a in device.allocations]
    claims = list(KubeObject.objects.filter(kind="resourceclaims", uid__in=claim_uids))
    pod_uids = [p["uid"] for a in device.allocations for p in a.get("pods", [])]
    pods = list(KubeObject.objects.filter(kind="pods", uid__in=pod_uids))
    rule_names = [t["rule"] for t in device.taints if t["source"] == "rule"]
    rules = list(KubeObject.objects.filter(kind="devicetaintrules", name__in=rule_names))
    pool = Pool.objects.filter(driver=device.driver, name=device.pool).first()
    counters = pool_counters_left(pools=[pool])[pool.pk] if pool and pool.shared_counters else {}
    return DeviceDetail(
        device=device,
        slice=slice_obj,
        claims=claims,
        pods=pods,
        rules=rules,
        pool=pool,
        counters_left=counters,
    )


DEVICE_ROW_FIELDS = (
    "id",
    "driver",
    "pool",
    "name",
    "node_name",
    "numa_node",
    "classes",
    "taints",
    "allocation_state",
    "admin_access",
    "allocations",
    "health",
    "pool_complete",
)


def device_rows(devices: QuerySet[Device]) -> Iterator[dict[str, Any]]:
    """What each row of the Devices table (and its CSV/JSON export) shows.

    Reads only the shown columns as plain values: building model instances and decoding every JSON
    column costs more than the query itself at a page of a few hundred rows.
    """
    for d in devices.values(*DEVICE_ROW_FIELDS).iterator(chunk_size=2000):
        allocations = d["allocations"] or []
        yield {
            "id": d["id"],
            "driver": d["driver"],
            "pool": d["pool"],
            "device": d["name"],
            "node": d["node_name"],
            "numa": d["numa_node"],
            "classes": list(d["classes"] or []),
            "taints": [
                {
                    "key": t.get("key", ""),
                    "value": t.get("value", ""),
                    "effect": t.get("effect", ""),
                    "source": t.get("source", ""),
                    "rule": t.get("rule", ""),
                }
                for t in d["taints"] or []
            ],
            "state": d["allocation_state"],
            "adminAccess": d["admin_access"],
            "claims": [
                f"{a.get('namespace', '')}/{a.get('claim', '')}" for a in allocations if a.get("claim")
            ],
            "pods": [
                f"{pod.get('namespace', '')}/{pod.get('name', '')}"
                for a in allocations
                for pod in a.get("pods") or []
            ],
            "health": d["health"],
            "poolComplete": d["pool_complete"],
        }


def device_filter_choices() -> dict[str, list[str]]:
    """Values for the Devices filter dropdowns (distinct drivers, classes; nodes and pools are free text)."""
    classes = sorted(KubeObject.objects.filter(kind=CLASSES).values_list("name", flat=True))
    drivers = sorted(set(Pool.objects.values_list("driver", flat=True)))
    return {"classes": classes, "drivers": drivers}
