"""Which inventory devices a maintenance's rules select right now, and what they span."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from inventory.models import Device

MAX_NODES_LISTED = 50


def selected_devices(rules: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(driver, pool, device, node) of every device the rules select in the inventory, sorted.

    dradash's rules select by driver + pool (+ device), or everything (the empty selector)."""
    selectors = [dict(r.get("selector") or {}) for r in rules]
    if not selectors:
        return []
    rows = Device.objects.all()
    if any(not s for s in selectors):
        return sorted(rows.values_list("driver", "pool", "name", "node_name"))
    whole_pools = {(s.get("driver"), s.get("pool")) for s in selectors if not s.get("device")}
    single = {(s.get("driver"), s.get("pool"), s.get("device")) for s in selectors if s.get("device")}
    rows = rows.filter(
        driver__in={s.get("driver", "") for s in selectors}, pool__in={s.get("pool", "") for s in selectors}
    )
    return sorted(
        (driver, pool, name, node)
        for driver, pool, name, node in rows.values_list("driver", "pool", "name", "node_name")
        if (driver, pool) in whole_pools or (driver, pool, name) in single
    )


def summarize(devices: Iterable[tuple[str, str, str, str]]) -> dict[str, Any]:
    """{device_count, node_count, nodes (first 50), drivers, pool_count}: what a selection spans."""
    rows = list(devices)
    nodes = sorted({d[3] for d in rows if d[3]})
    return {
        "device_count": len(rows),
        "node_count": len(nodes),
        "nodes": nodes[:MAX_NODES_LISTED],
        "drivers": sorted({d[0] for d in rows}),
        "pool_count": len({(d[0], d[1]) for d in rows}),
        "without_node": sum(1 for d in rows if not d[3]),
    }


def cluster_device_count() -> int:
    return Device.objects.count()
