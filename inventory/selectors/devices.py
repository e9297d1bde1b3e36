"""The Devices list and one device's detail."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from dra.availability import BLOCK_REASONS
from inventory.filters import DeviceFilterSet
from inventory.models import ClassAvailability, Device, KubeObject, Pool
from inventory.selectors.classes import ClassNumbers, class_availability
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
    #: what one-device claims of each class of the device could get from its pool now, and in all
    pool_availability: list[ClassAvailability] = field(default_factory=list)
    class_numbers: dict[str, ClassNumbers] = field(default_factory=dict)

    @property
    def blocked_label(self) -> str:
        return BLOCK_REASONS.get(self.device.blocked, self.device.blocked)


def device_get(*, driver: str, pool: str, name: str) -> Device:
    return Device.objects.get(driver=driver, pool=pool, name=name)


def device_detail(*, device: Device) -> DeviceDetail:
    slice_obj = KubeObject.objects.filter(kind="resourceslices", uid=device.slice_uid).first()
    claim_uids = [a["claimUid"] for a in device.allocations]
    claims = list(KubeObject.objects.filter(kind="resourceclaims", uid__in=claim_uids))
    pod_uids = [p["uid"] for a in device.allocations for p in a.get("pods", [])]
    pods = list(KubeObject.objects.filter(kind="pods", uid__in=pod_uids))
    rule_names = [t["rule"] for t in device.taints if t["source"] == "rule"]
    rules = list(KubeObject.objects.filter(kind="devicetaintrules", namespace="", name__in=rule_names))
    pool = Pool.objects.filter(driver=device.driver, name=device.pool).first()
    counters = pool_counters_left(pools=[pool])[pool.pk] if pool and pool.shared_counters else {}
    in_pool = list(
        ClassAvailability.objects.filter(driver=device.driver, pool=device.pool).order_by("device_class")
    )
    classes = sorted({*(a.device_class for a in in_pool), *(device.classes or [])})
    return DeviceDetail(
        device=device,
        slice=slice_obj,
        claims=claims,
        pods=pods,
        rules=rules,
        pool=pool,
        counters_left=counters,
        pool_availability=in_pool,
        class_numbers=class_availability(names=classes),
    )


def device_filter_choices() -> dict[str, list[str]]:
    """Values for the Devices filter dropdowns (distinct drivers, classes; nodes and pools are free text)."""
    classes = sorted(KubeObject.objects.filter(kind=CLASSES).values_list("name", flat=True))
    drivers = sorted(set(Pool.objects.values_list("driver", flat=True)))
    return {"classes": classes, "drivers": drivers}
