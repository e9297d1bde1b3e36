"""Fingerprints of what the allocator can see of one node, so that nodes that look alike share one
answer (headroom counts, feasibility explanations) instead of being computed a thousand times.

The allocator never sees node or pool names except to order pools, and the fingerprint keeps that
order; device attributes that no selector or constraint of the question names (serial numbers, bus
ids) are left out, unless a selector could read attributes without naming them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from allocation.snapshot import Obj, Snapshot
from allocation.whatif.view import AllocatorView, allocation_results, meta
from dra.selection import device_selector

# CEL that can look at attributes it does not name (map macros, sizes): then every attribute counts.
_ATTRIBUTE_WILDCARDS = (
    "exists",
    "all(",
    "map(",
    "filter(",
    "size(",
    "in device.attributes",
    "device.attributes)",
)


def attribute_filter(snapshot: Snapshot, claims: list[Obj]) -> Any:
    """A function dropping device attributes no selector or constraint of this question can read
    (serial numbers, bus ids …), so that otherwise identical nodes share one answer; or None."""
    texts: list[str] = []
    for cls in snapshot.classes:
        texts += [
            str((sel.get("cel") or {}).get("expression", ""))
            for sel in (cls.get("spec") or {}).get("selectors") or []
        ]
    for claim in claims:
        devices = (claim.get("spec") or {}).get("devices") or {}
        for req in devices.get("requests") or []:
            for part in [req.get("exactly") or {}, *(req.get("firstAvailable") or [])]:
                texts += [
                    str((sel.get("cel") or {}).get("expression", "")) for sel in part.get("selectors") or []
                ]
        for constraint in devices.get("constraints") or []:
            texts += [str(constraint.get("matchAttribute", "")), str(constraint.get("distinctAttribute", ""))]
    blob = "\n".join(texts)
    if any(w in blob for w in _ATTRIBUTE_WILDCARDS):
        return None

    def keep(attributes: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in attributes.items() if k.rsplit("/", 1)[-1] in blob}

    return keep


def node_fingerprint(
    view: AllocatorView, node: str, *, with_labels: bool, keep_attributes: Any = None
) -> str:
    """What the allocator can see of `node`'s own pools, with their names replaced by their rank."""
    pools = view.local_pools.get(node, [])
    rank = {key: i for i, key in enumerate(sorted(pools))}
    parts: list[Any] = []
    for key in sorted(pools):
        slices = sorted(view.slices_by_pool.get(key, ()), key=lambda s: str(meta(s).get("name", "")))
        if view.shared_pools:
            # Pools are tried in (driver, name) order: keep where this pool falls among the shared ones.
            parts.append(["order", rank[key], sum(1 for shared in view.shared_pools if shared < key)])
        for order, s in enumerate(slices):
            spec = dict(s.get("spec") or {})
            spec.pop("nodeName", None)
            pool = dict(spec.pop("pool", None) or {})
            pool.pop("name", None)
            if keep_attributes is not None:
                spec["devices"] = [
                    {**d, "attributes": keep_attributes(d.get("attributes") or {})}
                    for d in spec.get("devices") or []
                ]
            parts.append(["slice", rank[key], order, pool, spec])
            for device in spec.get("devices") or []:
                rules = [
                    [meta(r).get("name"), (r.get("spec") or {}).get("taint")]
                    for r in view.taint_rules
                    if device_selector((r.get("spec") or {}).get("deviceSelector")).selects(
                        key[0], key[1], str(device.get("name"))
                    )
                ]
                if rules:
                    parts.append(["rules", rank[key], device.get("name"), rules])
        for claim in view.claims_by_pool.get(key, ()):
            for r in allocation_results(claim):
                if (r.get("driver"), r.get("pool")) == key:
                    parts.append(
                        [
                            "used",
                            rank[key],
                            r.get("device"),
                            bool(r.get("shareID")),
                            r.get("adminAccess"),
                            r.get("consumedCapacity"),
                        ]
                    )
    if with_labels:
        parts.append(["labels", meta(view.node_obj(node)).get("labels") or {}])
    parts.sort(key=lambda p: json.dumps(p, sort_keys=True, default=str))
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
