"""DeviceAttribute rows: one per `name=value` line of a device's `attribute_index` (dra.objects
`attribute_index_lines`), rewritten only for the devices whose attribute text changed, so a slice
republished as it was costs nothing here."""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace

from inventory.mirror import sql
from inventory.mirror.derive.common import DeviceKey, chunks, pools_qs
from inventory.models import Device, DeviceAttribute


def lines_of(attribute_index: str) -> list[str]:
    return [line for line in dict.fromkeys(attribute_index.split("\n")) if line]


def refresh_attribute_lines(
    rows: Iterable[SimpleNamespace], before: dict[DeviceKey, tuple[int, str]], pool_keys: set[str]
) -> None:
    """`rows`: the devices just written (driver, pool, name, attribute_index); `before`: (pk, attribute
    text) of the devices that existed. Devices that are gone lose theirs with the Device row (CASCADE)."""
    changed: dict[DeviceKey, str] = {}
    for row in rows:
        key = (row.driver, row.pool, row.name)
        old = before.get(key)
        if old is None or old[1] != row.attribute_index:
            changed[key] = row.attribute_index
    if not changed:
        return
    pks = {key: before[key][0] for key in changed if key in before}
    new = {key for key in changed if key not in pks}
    if new:
        pools = {f"{driver}/{pool}" for driver, pool, _ in new} & pool_keys
        for q in pools_qs(pools):
            for pk, driver, pool, name in (
                Device.objects.filter(q).order_by().values_list("pk", "driver", "pool", "name")
            ):
                if (driver, pool, name) in new:
                    pks[(driver, pool, name)] = pk
    rewritten = [pks[key] for key in changed if key in before]
    for batch in chunks(rewritten):
        DeviceAttribute.objects.filter(device_id__in=batch).delete()
    sql.insert(
        DeviceAttribute,
        (
            SimpleNamespace(device=pks[key], line=line)
            for key, text in changed.items()
            if key in pks
            for line in lines_of(text)
        ),
        fields=["device", "line"],
    )
