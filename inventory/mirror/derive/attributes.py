"""DeviceAttribute rows: one per `name=value` line of a device's `attribute_index` (dra.objects
`attribute_index_lines`), rewritten only for the devices whose attribute text changed, so a slice
republished as it was costs nothing here.

The lines of `attributes_flat` (all of them but a list attribute's elements) are written by one
`INSERT … SELECT` per chunk of pools from the JSON the Device rows already hold (SQLite `json_each`,
PostgreSQL `jsonb_each_text`): ten times cheaper than building and binding a row per line in Python
(measured: 0.08 s instead of 0.8 s for 60,000 lines). A list attribute's elements are added from Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace

from django.db import connection
from django.db.models import Exists, OuterRef

from inventory.mirror import sql
from inventory.mirror.derive.common import DeviceKey, chunks, keys_q, pools_qs
from inventory.models import Device, DeviceAttribute


def lines_of(attribute_index: str) -> list[str]:
    return [line for line in dict.fromkeys(attribute_index.split("\n")) if line]


def _each_text() -> str:
    if connection.vendor == "postgresql":
        return "CROSS JOIN LATERAL jsonb_each_text(d.attributes_flat) AS j"
    return ", json_each(d.attributes_flat) AS j"


def refresh_attribute_lines(
    rows: Iterable[SimpleNamespace], before: dict[DeviceKey, tuple[int, str]], pool_keys: set[str]
) -> None:
    """`rows`: the devices just written (driver, pool, name, attributes_flat, attribute_index); `before`:
    (pk, attribute text) of the devices that existed. Devices that are gone lose theirs with the Device
    row (CASCADE)."""
    changed: dict[DeviceKey, SimpleNamespace] = {}
    for row in rows:
        key = (row.driver, row.pool, row.name)
        old = before.get(key)
        if old is None or old[1] != row.attribute_index:
            changed[key] = row
    if not changed:
        return
    rewritten = [before[key][0] for key in changed if key in before]
    for batch in chunks(rewritten):
        DeviceAttribute.objects.filter(device_id__in=batch).delete()
    # Every device of these pools without lines now gets its flat attributes' lines: the changed ones
    # (new, or just emptied above) — and devices without attributes, which have none to add.
    table = connection.ops.quote_name(DeviceAttribute._meta.db_table)
    devices = connection.ops.quote_name(Device._meta.db_table)
    pools = {f"{driver}/{pool}" for driver, pool, _ in changed} & pool_keys
    with connection.cursor() as cursor:
        for q in pools_qs(pools):
            ids = (
                Device.objects.filter(q)
                .filter(~Exists(DeviceAttribute.objects.filter(device=OuterRef("pk"))))
                .order_by()
                .values("pk")
            )
            subquery, params = ids.query.sql_with_params()
            cursor.execute(
                f"INSERT INTO {table} (device_id, line) SELECT d.id, j.key || '=' || j.value "
                f"FROM {devices} AS d {_each_text()} WHERE d.id IN ({subquery})",
                params,
            )
    # A list attribute's elements (DRAListTypeAttributes): lines beyond the flat ones.
    extra = {
        key: more
        for key, row in changed.items()
        if (more := _beyond_flat(row.attribute_index, row.attributes_flat or {}))
    }
    if extra:
        pks = {key: before[key][0] for key in extra if key in before and before[key][0]}
        missing = {key for key in extra if key not in pks}
        for q in keys_q(missing) if missing else ():
            for pk, driver, pool, name in Device.objects.filter(q).values_list(
                "pk", "driver", "pool", "name"
            ):
                if (driver, pool, name) in missing:
                    pks[(driver, pool, name)] = pk
        sql.insert(
            DeviceAttribute,
            (
                SimpleNamespace(device=pks[key], line=line)
                for key, lines in extra.items()
                if key in pks
                for line in lines
            ),
            fields=["device", "line"],
        )


def _beyond_flat(attribute_index: str, flat: dict[str, str]) -> list[str]:
    if attribute_index.count("\n") == len(flat) + 1:
        # "\n" + one line per flat attribute: `attribute_index_lines` gave the flat lines only.
        return []
    written = {f"{k}={v}" for k, v in flat.items()}
    return [line for line in lines_of(attribute_index) if line not in written]
