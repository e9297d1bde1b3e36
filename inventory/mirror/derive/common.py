"""What every derive module shares: key types, chunking, device lookups by key."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q

from inventory.models import Device

JSON = dict[str, Any]
DeviceKey = tuple[str, str, str]  # driver, pool, device
CHUNK = 500
# Above this many keys, load whole tables instead of building long OR queries.
BULK_THRESHOLD = 300


def chunks(values: Iterable[Any], size: int = CHUNK) -> Iterable[list[Any]]:
    batch: list[Any] = []
    for value in values:
        batch.append(value)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def devices_by_keys(keys: set[DeviceKey]) -> list[Device]:
    if not keys:
        return []
    if len(keys) > BULK_THRESHOLD:
        return [d for d in Device.objects.all() if (d.driver, d.pool, d.name) in keys]
    result: list[Device] = []
    for batch in chunks(sorted(keys), 100):
        q = Q(pk__in=[])
        for driver, pool, name in batch:
            q |= Q(driver=driver, pool=pool, name=name)
        result.extend(Device.objects.filter(q))
    return result


def pool_key(driver: str, pool: str) -> str:
    """How the mirror names a pool in KubeObject.index_key and in sets of pools: "driver/pool"."""
    return f"{driver}/{pool}"


def pools_q(pool_keys: Iterable[str], *, driver_field: str = "driver", pool_field: str = "pool") -> Q:
    """A filter for the rows of these pools ("driver/pool" keys)."""
    q = Q(pk__in=[])
    for key in pool_keys:
        driver, _, pool = key.partition("/")
        q |= Q(**{driver_field: driver, pool_field: pool})
    return q
