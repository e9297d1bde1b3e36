"""Pool rows and Device rows from the pools' ResourceSlices (highest generation only)."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

from dra.objects import attribute_index_lines, flat_attributes, node_selection, numa_node
from inventory.mirror import sql
from inventory.mirror.derive.attributes import refresh_attribute_lines
from inventory.mirror.derive.availability import BLOCKED_FIELDS, write_pool_numbers
from inventory.mirror.derive.claims import ALLOCATION_FIELDS, allocations_by_device, fill_allocations
from inventory.mirror.derive.classes import CLASS_FIELDS, fill_classes
from inventory.mirror.derive.common import JSON, DeviceKey, chunks, pools_qs
from inventory.mirror.derive.context import Context
from inventory.mirror.derive.counts import recounted
from inventory.mirror.derive.health import HEALTH_FIELDS, fill_health
from inventory.mirror.derive.taints import TAINT_FIELDS, fill_taints
from inventory.models import Device, KubeObject, Pool

SLICE_FIELDS = [
    "slice_uid",
    "slice_name",
    "slice_created",
    "node_name",
    "node_selection",
    "pool_generation",
    "pool_complete",
    "attributes",
    "attributes_flat",
    "attribute_index",
    "capacity",
    "consumes_counters",
    "allow_multiple_allocations",
    "partitionable",
    "numa_node",
    "binding_conditions",
    "slice_taints",
]


#: pools whose availability is computed at once (one query each for their claims and nodes)
AVAILABILITY_BATCH = 100

ALL_DEVICE_FIELDS = SLICE_FIELDS + TAINT_FIELDS + ALLOCATION_FIELDS + HEALTH_FIELDS + CLASS_FIELDS


def recompute_pools(
    pool_keys: set[str],
    gone_slice_uids: set[str],
    ctx: Context,
    *,
    fresh: dict[str, JSON] | None = None,
    availability: bool = False,
) -> set[DeviceKey]:
    """Rebuild Pool rows and their Device rows from the pools' slices; returns device keys now present.

    `availability`: compute the pools' availability too (`derive.availability.write_pool_numbers`) from the
    slices in hand, so each device row is written with it, instead of being updated afterwards (on
    PostgreSQL an update of an indexed column writes the row into every index of the table again). A
    list's pages do it: the kinds availability reads (claims, classes, rules, nodes) are listed first;
    one listed later asks for its pools again."""
    if not pool_keys:
        return set()
    slices_by_pool: dict[str, list[JSON]] = defaultdict(list)
    fresh = fresh or {}
    to_load: list[str] = []
    for batch in chunks(sorted(pool_keys)):
        rows = KubeObject.objects.filter(kind="resourceslices", index_key__in=batch).values_list(
            "uid", "index_key"
        )
        for uid, index_key in rows:
            if uid in fresh:  # written in this batch: no need to read it back
                slices_by_pool[index_key].append(fresh[uid])
            else:
                to_load.append(uid)
    for batch in chunks(to_load):
        for index_key, raw in KubeObject.objects.filter(kind="resourceslices", uid__in=batch).values_list(
            "index_key", "raw"
        ):
            slices_by_pool[index_key].append(raw)

    all_slice_uids = set(gone_slice_uids)
    for slices in slices_by_pool.values():
        all_slice_uids.update(s["metadata"]["uid"] for s in slices)
    # (pk, health reports) of the devices that exist now; reports survive a slice republish.
    existing: dict[DeviceKey, tuple[int, JSON]] = {}
    attribute_texts: dict[DeviceKey, tuple[int, str]] = {}  # (pk, attribute_index) for DeviceAttribute
    stale: list[int] = []

    def remember(pk: int, driver: str, pool: str, name: str, reports: JSON, attribute_index: str) -> None:
        key = (driver, pool, name)
        if key in existing and existing[key][0] != pk:
            stale.append(pk)
        else:
            existing[key] = (pk, reports or {})
            attribute_texts[key] = (pk, attribute_index)

    columns = ("pk", "driver", "pool", "name", "health_reports", "attribute_index")
    for batch in chunks(sorted(all_slice_uids)):
        for row in Device.objects.filter(slice_uid__in=batch).values_list(*columns):
            remember(*row)
    # Devices of the affected pools that sit in slices we did not look at (moved between slices).
    for q in pools_qs(pool_keys):
        for row in Device.objects.filter(q).order_by().values_list(*columns):
            remember(*row)

    allocations = allocations_by_device(pool_keys=pool_keys)
    pools_existing = {f"{p.driver}/{p.name}": p for p in _pools(pool_keys)}
    pool_rows: list[Pool] = []
    pool_deletes: list[int] = []
    device_rows: list[SimpleNamespace] = []
    present: set[DeviceKey] = set()

    for key in sorted(pool_keys):
        slices = slices_by_pool.get(key, [])
        if not slices:
            if key in pools_existing:
                pool_deletes.append(pools_existing[key].pk)
            continue
        driver, _, pool_name = key.partition("/")
        generation = max(
            int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0) for s in slices
        )
        current = sorted(
            (
                s
                for s in slices
                if int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0) == generation
            ),
            key=lambda s: str(s["metadata"].get("name", "")),
        )
        expected = max(
            int(((s.get("spec") or {}).get("pool") or {}).get("resourceSliceCount") or 0) for s in current
        )
        complete = len(current) == expected
        problems: list[str] = []
        if not complete:
            problems.append(f"incomplete: {len(current)} of {expected} slices at generation {generation}")
        counters: dict[str, dict[str, str]] = {}
        nodes: set[str] = set()
        seen: set[str] = set()
        count = 0
        for slice_obj in current:
            spec = slice_obj.get("spec") or {}
            selection, node = node_selection(spec)
            nodes.add(node)
            for counter_set in spec.get("sharedCounters") or []:
                name = str(counter_set.get("name", ""))
                if name in counters:
                    problems.append(f"duplicate counter set {name}")
                counters[name] = {
                    str(c): str((v or {}).get("value", "0"))
                    for c, v in (counter_set.get("counters") or {}).items()
                }
            for device_json in spec.get("devices") or []:
                name = str(device_json.get("name", ""))
                if name in seen:
                    problems.append(f"duplicate device name {name}")
                    continue
                seen.add(name)
                count += 1
                device_key = (driver, pool_name, name)
                present.add(device_key)
                _pk, reports = existing.get(device_key, (0, {}))
                # Availability is computed after the pool's rows are written (derive.availability).
                row = SimpleNamespace(
                    driver=driver,
                    pool=pool_name,
                    name=name,
                    health_reports=reports,
                    blocked="",
                    blocked_reason="",
                )
                fill_from_slice(
                    row, slice_obj, device_json, selection=selection, node=node, complete=complete
                )  # type: ignore[arg-type]
                fill_taints(row, ctx)  # type: ignore[arg-type]
                fill_classes(row, ctx, device_json)  # type: ignore[arg-type]
                fill_allocations(row, allocations.get(device_key, []))  # type: ignore[arg-type]
                fill_health(row)  # type: ignore[arg-type]
                device_rows.append(row)
        pool = pools_existing.get(key) or Pool(driver=driver, name=pool_name)
        pool.generation = generation
        pool.slice_count = len(current)
        pool.expected_slice_count = expected
        pool.complete = complete
        pool.node_name = next(iter(nodes)) if len(nodes) == 1 else ""
        pool.device_count = count
        pool.shared_counters = counters
        pool.problems = problems
        pool_rows.append(pool)

    if availability:
        by_pool: dict[str, list[SimpleNamespace]] = defaultdict(list)
        for row in device_rows:
            by_pool[f"{row.driver}/{row.pool}"].append(row)
        for batch in chunks(sorted(pool_keys), AVAILABILITY_BATCH):
            wanted = {key: {c for row in by_pool.get(key, ()) for c in row.classes} for key in batch}
            blocked = write_pool_numbers(batch, slices_by_pool, wanted, ctx)
            for key in batch:
                blocked_now = blocked.get(key, {})
                for row in by_pool.get(key, ()):
                    row.blocked, row.blocked_reason = blocked_now.get(row.name, ("", ""))
    stale.extend(pk for key, (pk, _r) in existing.items() if key not in present)  # slices gone or obsolete
    for batch in chunks(pool_deletes):
        Pool.objects.filter(pk__in=batch).delete()
    sql.upsert(Pool, pool_rows, fields=POOL_FIELDS, conflict=["driver", "name"])
    # The device rows written below change only devices held in `existing` and `stale`, and insert new ones.
    with recounted(sorted({pk for pk, _r in existing.values()} | set(stale)), len(device_rows) + len(stale)):
        for batch in chunks(stale):
            Device.objects.filter(pk__in=batch).delete()
        sql.upsert(
            Device,
            device_rows,
            fields=["driver", "pool", "name", *ALL_DEVICE_FIELDS, "blocked", "blocked_reason"],
            conflict=["driver", "pool", "name"],
            # without `availability`, an existing device keeps its availability until it is recomputed
            update=[*ALL_DEVICE_FIELDS, *BLOCKED_FIELDS] if availability else ALL_DEVICE_FIELDS,
        )
    refresh_attribute_lines(device_rows, attribute_texts, pool_keys)
    return present


POOL_FIELDS = [
    "driver",
    "name",
    "generation",
    "slice_count",
    "expected_slice_count",
    "complete",
    "node_name",
    "device_count",
    "shared_counters",
    "problems",
]


def _pools(pool_keys: set[str]) -> list[Pool]:
    found: list[Pool] = []
    for q in pools_qs(pool_keys, pool_field="name"):
        found.extend(Pool.objects.filter(q).order_by())
    return found


def fill_from_slice(
    row: Device, slice_obj: JSON, device: JSON, *, selection: str, node: str, complete: bool
) -> None:
    spec = slice_obj.get("spec") or {}
    row.slice_uid = str(slice_obj["metadata"]["uid"])
    row.slice_name = str(slice_obj["metadata"].get("name", ""))
    row.slice_created = str(slice_obj["metadata"].get("creationTimestamp") or "")[:40]
    if selection == "perDevice":
        per_selection, per_node = node_selection(device)
        row.node_selection = f"perDevice:{per_selection}" if per_selection else "perDevice"
        row.node_name = per_node
    else:
        row.node_selection = selection
        row.node_name = node
    row.pool_generation = int((spec.get("pool") or {}).get("generation") or 0)
    row.pool_complete = complete
    attributes = device.get("attributes") or {}
    row.attributes = attributes
    flat = row.attributes_flat = flat_attributes(row.driver, attributes)
    lines = attribute_index_lines(row.driver, attributes, flat)
    row.attribute_index = "\n" + "\n".join(lines) + "\n" if lines else "\n"
    row.capacity = device.get("capacity") or {}
    row.consumes_counters = device.get("consumesCounters") or []
    row.allow_multiple_allocations = bool(device.get("allowMultipleAllocations"))
    row.partitionable = bool(row.consumes_counters)
    row.numa_node = numa_node(attributes)
    row.binding_conditions = device.get("bindingConditions") or []
    row.slice_taints = device.get("taints") or []
