"""Allocation and Claim rows from ResourceClaims, and the allocation columns of their devices."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, NamedTuple

from django.db.models import Q

from dra.objects import claim_device_classes, claim_state, is_extended_resource_claim, owner_pod
from inventory.mirror import sql
from inventory.mirror.derive.common import JSON, DeviceKey, chunks, keys_q, pools_qs
from inventory.models import ALLOCATED, FREE, SHARED, Allocation, Claim, Device

ALLOCATION_FIELDS = [
    "allocations",
    "allocation_state",
    "admin_access",
    "claim_namespace",
    "claim_name",
    "statuses",
]


def fill_allocations(row: Device, allocations: list[Allocation]) -> None:
    entries: list[JSON] = []
    statuses: list[JSON] = []
    for a in sorted(allocations, key=lambda a: (a.admin_access, a.claim_namespace, a.claim_name, a.request)):
        main, _, sub = a.request.partition("/")
        entries.append(
            {
                "claimUid": a.claim_uid,
                "namespace": a.claim_namespace,
                "claim": a.claim_name,
                "request": main,
                "subrequest": sub,
                "adminAccess": a.admin_access,
                "shareID": a.share_id,
                "consumedCapacity": a.consumed_capacity,
                "pods": a.pods,
                "extendedResource": a.extended_resource,
            }
        )
        if a.status:
            statuses.append(
                {"namespace": a.claim_namespace, "claim": a.claim_name, "shareID": a.share_id, **a.status}
            )
    row.allocations = entries
    row.statuses = statuses
    regular = [e for e in entries if not e["adminAccess"]]
    row.admin_access = any(e["adminAccess"] for e in entries)
    if not entries:
        row.allocation_state = FREE
    elif row.allow_multiple_allocations and regular:
        row.allocation_state = SHARED
    else:
        row.allocation_state = ALLOCATED
    first = regular[0] if regular else (entries[0] if entries else None)
    row.claim_namespace = first["namespace"] if first else ""
    row.claim_name = first["claim"] if first else ""


def allocations_by_device(
    *, keys: set[DeviceKey] | None = None, pool_keys: set[str] | None = None
) -> dict[DeviceKey, list[Allocation]]:
    """Allocation rows as plain namespaces (the columns `fill_allocations` reads; no model instances)."""
    result: dict[DeviceKey, list[Allocation]] = defaultdict(list)
    pools = pool_keys or set()
    wanted = {k for k in keys or () if f"{k[0]}/{k[1]}" not in pools}  # those read whole below
    for q in keys_q(wanted, name_field="device"):  # a superset: keep the exact keys
        for a in _allocation_rows(q):
            if (a.driver, a.pool, a.device) in wanted:
                result[(a.driver, a.pool, a.device)].append(a)
    for q in pools_qs(pools):
        for a in _allocation_rows(q):
            result[(a.driver, a.pool, a.device)].append(a)
    return result


def _allocation_rows(q: Q) -> Iterator[Allocation]:
    for row in Allocation.objects.filter(q).order_by().values(*ALLOCATION_ROW_FIELDS):
        yield SimpleNamespace(**row)  # type: ignore[misc]


class ClaimChanges(NamedTuple):
    """What rewriting some claims' rows changed: `devices`, every device a changed claim holds or held (its
    allocation columns are rewritten); `holdings`, only the devices whose holders changed (which claim
    holds them, and how: `HOLDING_FIELDS`), the ones whose pool's availability moved. A claim's
    reservedFor or its driver's device status changes the first, never the second."""

    devices: set[DeviceKey]
    holdings: set[DeviceKey]


def replace_claims(changed: dict[str, JSON | None]) -> ClaimChanges:
    """Rewrite Allocation and Claim rows of changed claims (None = deleted)."""
    affected: set[DeviceKey] = set()
    held_before: dict[str, set[tuple[Any, ...]]] = defaultdict(set)
    uids = list(changed)
    for batch in chunks(uids):
        for row in Allocation.objects.filter(claim_uid__in=batch).values_list(*HOLDING_FIELDS):
            held_before[row[0]].add(_holding(row))
            affected.add((row[4], row[5], row[6]))
        Allocation.objects.filter(claim_uid__in=batch).delete()
    new_rows: list[SimpleNamespace] = []
    summaries: list[SimpleNamespace] = []
    gone: list[str] = []
    for uid, claim in changed.items():
        if claim is None:
            gone.append(uid)
            continue
        meta = claim.get("metadata") or {}
        status = claim.get("status") or {}
        allocation = status.get("allocation") or {}
        results = (allocation.get("devices") or {}).get("results") or []
        pods = [
            {"namespace": meta.get("namespace", ""), "name": r.get("name", ""), "uid": r.get("uid", "")}
            for r in status.get("reservedFor") or []
            if r.get("resource") == "pods"
        ]
        device_status = {
            (d.get("driver"), d.get("pool"), d.get("device"), d.get("shareID") or ""): d
            for d in status.get("devices") or []
        }
        extended = is_extended_resource_claim(claim)
        for result in results:
            key = (str(result.get("driver", "")), str(result.get("pool", "")), str(result.get("device", "")))
            entry = device_status.get((*key, result.get("shareID") or ""))
            new_rows.append(
                SimpleNamespace(
                    claim_uid=uid,
                    claim_namespace=str(meta.get("namespace", "")),
                    claim_name=str(meta.get("name", "")),
                    request=str(result.get("request", "")),
                    driver=key[0],
                    pool=key[1],
                    device=key[2],
                    admin_access=bool(result.get("adminAccess")),
                    share_id=str(result.get("shareID") or ""),
                    consumed_capacity=result.get("consumedCapacity") or {},
                    pods=pods,
                    status={k: entry[k] for k in ("conditions", "networkData", "data") if k in entry}
                    if entry
                    else None,
                    extended_resource=extended,
                )
            )
            affected.add(key)
        requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
        summaries.append(
            SimpleNamespace(
                uid=uid,
                namespace=str(meta.get("namespace", "")),
                name=str(meta.get("name", "")),
                state=claim_state(claim),
                request_count=len(requests),
                device_count=len(results),
                reserved_for=[
                    {"resource": r.get("resource", ""), "name": r.get("name", ""), "uid": r.get("uid", "")}
                    for r in status.get("reservedFor") or []
                ],
                extended_resource=extended,
                owner_pod=owner_pod(claim),
                device_classes=claim_device_classes(claim),
                created=str(meta.get("creationTimestamp", "")),
            )
        )
    sql.insert(Allocation, new_rows, fields=ALLOCATION_ROW_FIELDS)
    for batch in chunks(gone):
        Claim.objects.filter(uid__in=batch).delete()
    sql.upsert(Claim, summaries, fields=CLAIM_FIELDS, conflict=["uid"])
    held_after: dict[str, set[tuple[Any, ...]]] = defaultdict(set)
    for row in new_rows:
        held_after[row.claim_uid].add(_holding(tuple(getattr(row, f) for f in HOLDING_FIELDS)))
    holdings: set[DeviceKey] = set()
    for uid in uids:
        before, after = held_before.get(uid, set()), held_after.get(uid, set())
        if before != after:
            holdings.update((h[4], h[5], h[6]) for h in before ^ after)
    return ClaimChanges(devices=affected, holdings=holdings)


def _holding(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """One Allocation row's `HOLDING_FIELDS`, hashable (consumed capacity is a JSON object)."""
    *fields, consumed = row
    return (*fields, json.dumps(consumed or {}, sort_keys=True))


#: The Allocation columns that say which claim holds a device and how: all a pool's availability reads
#: of its allocated claims (`availability._claims_by_pool`). In this order (`_holding`: the last is JSON).
HOLDING_FIELDS = [
    "claim_uid",
    "claim_namespace",
    "claim_name",
    "request",
    "driver",
    "pool",
    "device",
    "admin_access",
    "share_id",
    "consumed_capacity",
]

ALLOCATION_ROW_FIELDS = [*HOLDING_FIELDS, "pods", "status", "extended_resource"]


CLAIM_FIELDS = [
    "uid",
    "namespace",
    "name",
    "state",
    "request_count",
    "device_count",
    "reserved_for",
    "extended_resource",
    "owner_pod",
    "device_classes",
    "created",
]


DEVICE_ALLOCATION_READ = ("pk", "driver", "pool", "name", "allow_multiple_allocations", *ALLOCATION_FIELDS)


def refresh_allocations(keys: set[DeviceKey]) -> None:
    # The columns fill_allocations reads and writes, not whole Device instances (each decoding a dozen
    # JSON columns): this runs for every page of claims of an initial list.
    devices: list[Any] = []
    for q in keys_q(keys):
        for row in Device.objects.filter(q).order_by().values(*DEVICE_ALLOCATION_READ):
            if (row["driver"], row["pool"], row["name"]) in keys:
                devices.append(SimpleNamespace(**row))
    if not devices:
        return
    allocations = allocations_by_device(keys={(d.driver, d.pool, d.name) for d in devices})
    changed = []
    for device in devices:
        before = (device.allocations, device.statuses)
        fill_allocations(device, allocations.get((device.driver, device.pool, device.name), []))
        if (device.allocations, device.statuses) != before:
            changed.append(device)
    sql.update(Device, changed, fields=ALLOCATION_FIELDS)
