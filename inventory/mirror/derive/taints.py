"""Effective device taints (ResourceSlice taints and DeviceTaintRules, with provenance) and their flags."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dra.taints import TAINT_LEVEL
from inventory.mirror import sql
from inventory.mirror.derive.common import JSON, selector_filters
from inventory.mirror.derive.context import Context
from inventory.models import Device

TAINT_FIELDS = [
    "taints",
    "tainted",
    "taint_none",
    "taint_no_schedule",
    "taint_no_execute",
    "max_taint_effect",
]


def fill_taints(row: Device, ctx: Context) -> None:
    row.taints = [
        t.as_row() for t in ctx.rule_index.taints_for(row.driver, row.pool, row.name, row.slice_taints or [])
    ]
    for name, value in taint_flags(row.taints).items():
        setattr(row, name, value)


def taint_flags(taints: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Denormalised filter columns of a device's effective taints."""
    effects = {str(t["effectiveEffect"]) for t in taints}
    level = max((TAINT_LEVEL[e] for e in effects), default=0)
    return {
        "tainted": bool(effects),
        "taint_none": "None" in effects,
        "taint_no_schedule": "NoSchedule" in effects,
        "taint_no_execute": "NoExecute" in effects,
        "max_taint_effect": {0: "", 1: "None", 2: "NoSchedule", 3: "NoExecute"}[level],
    }


def refresh_taints(
    selectors: list[JSON | None], ctx: Context, *, after_pk: int = 0, limit: int | None = None
) -> int | None:
    """Recompute effective taints of the devices any of these rule selectors (old or new) select.

    With `limit`, only the next `limit` such devices with pk > `after_pk`; returns the last pk done, or
    None once every selected device is done."""
    filters = selector_filters(selectors)
    if not filters:
        return None
    columns = ("pk", "driver", "pool", "name", "slice_taints", *TAINT_FIELDS)
    found: dict[int, Device] = {}
    for q in filters:  # usually one; with several, the first `limit` pks of their union
        rows = Device.objects.filter(q, pk__gt=after_pk).order_by("pk").only(*columns)
        found.update((d.pk, d) for d in (rows[:limit] if limit is not None else rows))
    ordered = sorted(found)
    if limit is not None:
        ordered = ordered[:limit]
    changed = []
    last: int | None = None
    count = 0
    for pk in ordered:
        device = found[pk]
        count += 1
        last = pk
        before = device.taints
        fill_taints(device, ctx)
        if device.taints != before:
            changed.append(device)
    sql.update(Device, changed, fields=TAINT_FIELDS)
    return last if limit is not None and count == limit else None
