"""Recompute the derived rows (Pool, Device, Allocation, Claim) after mirrored objects changed.

Called by `inventory.mirror` inside the batch's transaction. Work is proportional to what changed:
a claim event touches its devices, a rule event the devices its old and new selectors select, a slice
event its pool. Only a DeviceClass change re-evaluates every device (classes change rarely).
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from types import SimpleNamespace
from typing import Any

from django.db.models import Q

from dra.objects import (
    claim_device_classes,
    claim_state,
    flat_attributes,
    is_extended_resource_claim,
    node_selection,
    numa_node,
    owner_pod,
)
from dra.taints import TAINT_LEVEL, effective_taints
from inventory import mirror_sql
from inventory.models import (
    ALLOCATED,
    FREE,
    SHARED,
    Allocation,
    Claim,
    Device,
    KubeObject,
    Pool,
)

log = logging.getLogger(__name__)

JSON = dict[str, Any]
DeviceKey = tuple[str, str, str]  # driver, pool, device
CHUNK = 500
# Above this many keys, load whole tables instead of building long OR queries.
BULK_THRESHOLD = 300

TAINT_FIELDS = [
    "taints",
    "tainted",
    "taint_none",
    "taint_no_schedule",
    "taint_no_execute",
    "max_taint_effect",
]
ALLOCATION_FIELDS = [
    "allocations",
    "allocation_state",
    "admin_access",
    "claim_namespace",
    "claim_name",
    "statuses",
]
HEALTH_FIELDS = ["health", "health_message", "health_reports"]
CLASS_FIELDS = ["classes", "class_index"]
SLICE_FIELDS = [
    "slice_uid",
    "slice_name",
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
ALL_DEVICE_FIELDS = SLICE_FIELDS + TAINT_FIELDS + ALLOCATION_FIELDS + HEALTH_FIELDS + CLASS_FIELDS


def chunks(values: Iterable[Any], size: int = CHUNK) -> Iterable[list[Any]]:
    batch: list[Any] = []
    for value in values:
        batch.append(value)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# --------------------------------------------------------------------------------------- classes (CEL)


ClassMatcher = Callable[[str, JSON], bool]
_DRIVER_ONLY = re.compile(r"""^\s*device\.driver\s*==\s*["']([^"']+)["']\s*$""")


def compile_class(cls: Mapping[str, Any]) -> tuple[ClassMatcher, str]:
    """A predicate over (driver, device JSON) for a DeviceClass's selectors, and a warning if it cannot work."""
    expressions = [
        str(((s or {}).get("cel") or {}).get("expression", ""))
        for s in (cls.get("spec") or {}).get("selectors") or []
    ]
    try:  # the backend the allocator uses (DRADASH_CEL_BACKEND), so the mirror matches classes the same way
        from dra.allocator.selectors import default_backend

        backend = default_backend()
    except ImportError:  # the allocator's CEL engine is optional for the mirror; fall back to driver checks
        drivers = []
        for expression in expressions:
            match = _DRIVER_ONLY.match(expression)
            if not match:
                return (lambda driver, device: False), "CEL engine unavailable: class selectors not evaluated"
            drivers.append(match.group(1))
        return (lambda driver, device: all(driver == d for d in drivers)), ""
    try:
        compiled = [backend.engine.compile(e) for e in expressions]
    except backend.errors as exc:
        return (lambda driver, device: False), f"selector does not compile: {exc}"
    return _CelClassMatcher(compiled, expressions, backend.device_input, backend.errors), ""


_DRIVER_GUARD = re.compile(r"""^\s*device\.driver\s*==\s*"([^"]+)"\s*(?:&&|$)""")
_DEVICE_REF = re.compile(r"""device\.(\w+)(\["([^"]+)"\]\.(\w+))?""")
_MEMO_LIMIT = 50_000


class _CelClassMatcher:
    """Evaluates a class's CEL selectors, skipping work where the answer is already known.

    * `device.driver == "x" && …` as the first term: other drivers are false without evaluating.
    * When the expressions read only `device.driver`, `device.allowMultipleAllocations` and
      `device.attributes["d"].n` / `device.capacity["d"].n`, the answer depends only on those values,
      so devices that agree on them share one evaluation (a node's GPUs differ in UUIDs, not model).
    """

    def __init__(
        self,
        compiled: list[Any],
        expressions: list[str],
        to_input: Any,
        cel_error: type[Exception] | tuple[type[Exception], ...],
    ):
        self.compiled = compiled
        self.to_input = to_input
        self.cel_error = cel_error
        # A guard only short-circuits when nothing can override it (no `||`, no ternary).
        guards = [_DRIVER_GUARD.match(e) for e in expressions if "||" not in e and "?" not in e]
        self.drivers = {m.group(1) for m in guards if m}
        self.refs: list[tuple[str, str, str]] | None = []
        for expression in expressions:
            for match in _DEVICE_REF.finditer(expression):
                field_name, indexed, domain, name = match.groups()
                if field_name in ("driver", "allowMultipleAllocations") and not indexed:
                    self.refs.append((field_name, "", ""))
                elif field_name in ("attributes", "capacity") and indexed:
                    self.refs.append((field_name, domain, name))
                else:
                    self.refs = None
                    break
            if self.refs is None:
                break
        self.memo: dict[tuple[Any, ...], bool] = {}

    def _key(self, driver: str, device: JSON) -> tuple[Any, ...] | None:
        if self.refs is None:
            return None
        key: list[Any] = [driver]
        for field_name, domain, name in self.refs:
            if not domain:
                key.append(device.get(field_name))
                continue
            values = device.get(field_name) or {}
            value = values.get(f"{domain}/{name}")
            if value is None and domain == driver:
                value = values.get(name)
            key.append(str(value))  # a cheap exact key: equal text means equal JSON values
        return tuple(key)

    def __call__(self, driver: str, device: JSON) -> bool:
        if not self.compiled:
            return True
        if len(self.drivers) > 1 or (self.drivers and driver not in self.drivers):
            return False
        key = self._key(driver, device)
        if key is not None and key in self.memo:
            return self.memo[key]
        result = self._evaluate(driver, device)
        if key is not None:
            if len(self.memo) > _MEMO_LIMIT:
                self.memo.clear()
            self.memo[key] = result
        return result

    def _evaluate(self, driver: str, device: JSON) -> bool:
        try:
            data = self.to_input(driver, device)
            return all(selector.matches(data) for selector in self.compiled)
        except self.cel_error:
            # Upstream aborts allocation on a runtime error; for display the device simply does not match.
            return False
        except Exception:  # malformed device JSON from the cluster must not stop the mirror
            log.debug("class selector failed on a device of %s", driver, exc_info=True)
            return False


class Context:
    """Per-batch caches of the few rules and classes, read on first use (pod and claim batches need neither)."""

    def __init__(self, matcher_cache: dict[tuple[str, str], tuple[ClassMatcher, str]]) -> None:
        self._matcher_cache = matcher_cache
        self._rules: list[JSON] | None = None
        self._classes: dict[str, ClassMatcher] | None = None
        self.class_warnings: dict[str, str] = {}

    @classmethod
    def load(cls, matcher_cache: dict[tuple[str, str], tuple[ClassMatcher, str]]) -> Context:
        return cls(matcher_cache)

    @property
    def rules(self) -> list[JSON]:
        if self._rules is None:
            self._rules = list(
                KubeObject.objects.filter(kind="devicetaintrules").values_list("raw", flat=True)
            )
        return self._rules

    @property
    def classes(self) -> dict[str, ClassMatcher]:
        if self._classes is None:
            self._classes = {}
            rows = KubeObject.objects.filter(kind="deviceclasses").values_list(
                "name", "resource_version", "raw"
            )
            for name, rv, raw in rows:
                key = (name, rv)
                if key not in self._matcher_cache:
                    self._matcher_cache[key] = compile_class(raw)
                matcher, warning = self._matcher_cache[key]
                self._classes[name] = matcher
                if warning:
                    self.class_warnings[name] = warning
        return self._classes

    def class_names(self, driver: str, device: JSON) -> list[str]:
        return sorted(name for name, matcher in self.classes.items() if matcher(driver, device))


# --------------------------------------------------------------------------------------- pools and devices


def recompute_pools(
    pool_keys: set[str], gone_slice_uids: set[str], ctx: Context, *, fresh: dict[str, JSON] | None = None
) -> set[DeviceKey]:
    """Rebuild Pool rows and their Device rows from the pools' slices; returns device keys now present."""
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
    stale: list[int] = []

    def remember(pk: int, driver: str, pool: str, name: str, reports: JSON) -> None:
        key = (driver, pool, name)
        if key in existing and existing[key][0] != pk:
            stale.append(pk)
        else:
            existing[key] = (pk, reports or {})

    columns = ("pk", "driver", "pool", "name", "health_reports")
    for batch in chunks(sorted(all_slice_uids)):
        for row in Device.objects.filter(slice_uid__in=batch).values_list(*columns):
            remember(*row)
    if len(pool_keys) <= BULK_THRESHOLD:
        # Devices of the affected pools that sit in slices we did not look at (moved between slices).
        q = Q(pk__in=[])
        for key in pool_keys:
            driver, _, pool = key.partition("/")
            q |= Q(driver=driver, pool=pool)
        for row in Device.objects.filter(q).values_list(*columns):
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
                row = SimpleNamespace(driver=driver, pool=pool_name, name=name, health_reports=reports)
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

    stale.extend(pk for key, (pk, _r) in existing.items() if key not in present)  # slices gone or obsolete
    for batch in chunks(stale):
        Device.objects.filter(pk__in=batch).delete()
    for batch in chunks(pool_deletes):
        Pool.objects.filter(pk__in=batch).delete()
    mirror_sql.upsert(Pool, pool_rows, fields=POOL_FIELDS, conflict=["driver", "name"])
    mirror_sql.upsert(
        Device,
        device_rows,
        fields=["driver", "pool", "name", *ALL_DEVICE_FIELDS],
        conflict=["driver", "pool", "name"],
    )
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
    if len(pool_keys) > BULK_THRESHOLD:
        return [p for p in Pool.objects.all() if f"{p.driver}/{p.name}" in pool_keys]
    q = Q(pk__in=[])
    for key in pool_keys:
        driver, _, pool = key.partition("/")
        q |= Q(driver=driver, name=pool)
    return list(Pool.objects.filter(q))


def fill_from_slice(
    row: Device, slice_obj: JSON, device: JSON, *, selection: str, node: str, complete: bool
) -> None:
    spec = slice_obj.get("spec") or {}
    row.slice_uid = str(slice_obj["metadata"]["uid"])
    row.slice_name = str(slice_obj["metadata"].get("name", ""))
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
    row.attributes_flat = flat_attributes(row.driver, attributes)
    row.attribute_index = "\n" + "".join(f"{k}={v}\n" for k, v in row.attributes_flat.items())
    row.capacity = device.get("capacity") or {}
    row.consumes_counters = device.get("consumesCounters") or []
    row.allow_multiple_allocations = bool(device.get("allowMultipleAllocations"))
    row.partitionable = bool(row.consumes_counters)
    row.numa_node = numa_node(attributes)
    row.binding_conditions = device.get("bindingConditions") or []
    row.slice_taints = device.get("taints") or []


def fill_taints(row: Device, ctx: Context) -> None:
    row.taints = [
        t.as_row()
        for t in effective_taints(
            driver=row.driver, pool=row.pool, device=row.name, slice_taints=row.slice_taints, rules=ctx.rules
        )
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


def fill_classes(row: Device, ctx: Context, device_json: JSON) -> None:
    row.classes = ctx.class_names(row.driver, device_json)
    row.class_index = " " + " ".join(row.classes) + " "


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


HEALTH_ORDER = {"Unhealthy": 3, "Unknown": 2, "Healthy": 1}


def fill_health(row: Device) -> None:
    """Pods' reports win (worst first); else a driver taint named like `…/unhealthy` marks it Unhealthy."""
    reports = row.health_reports or {}
    if reports:
        worst = max(reports.values(), key=lambda r: HEALTH_ORDER.get(str(r.get("health")), 0))
        row.health = str(worst.get("health", ""))
        row.health_message = str(worst.get("message", "") or worst.get("pod", ""))
        return
    for taint in row.slice_taints or []:
        key = str(taint.get("key", ""))
        if "unhealthy" in key.rpartition("/")[2].lower():
            row.health = "Unhealthy"
            row.health_message = f"{key}={taint.get('value', '')} ({taint.get('effect', '')})"
            return
    row.health = ""
    row.health_message = ""


# --------------------------------------------------------------------------------------- device lookups


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


def allocations_by_device(
    *, keys: set[DeviceKey] | None = None, pool_keys: set[str] | None = None
) -> dict[DeviceKey, list[Allocation]]:
    result: dict[DeviceKey, list[Allocation]] = defaultdict(list)
    wanted = len(keys or ()) + len(pool_keys or ())
    if not wanted:
        return result
    if wanted > BULK_THRESHOLD:
        rows: Iterable[Allocation] = Allocation.objects.all()
    else:
        q = Q(pk__in=[])
        for driver, pool, name in keys or ():
            q |= Q(driver=driver, pool=pool, device=name)
        for key in pool_keys or ():
            driver, _, pool = key.partition("/")
            q |= Q(driver=driver, pool=pool)
        rows = Allocation.objects.filter(q)
    for a in rows:
        result[(a.driver, a.pool, a.device)].append(a)
    return result


# --------------------------------------------------------------------------------------- claims


def replace_claims(changed: dict[str, JSON | None]) -> set[DeviceKey]:
    """Rewrite Allocation and Claim rows of changed claims (None = deleted); returns affected device keys."""
    affected: set[DeviceKey] = set()
    uids = list(changed)
    for batch in chunks(uids):
        affected.update(
            Allocation.objects.filter(claim_uid__in=batch).values_list("driver", "pool", "device")
        )
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
    mirror_sql.insert(Allocation, new_rows, fields=ALLOCATION_ROW_FIELDS)
    for batch in chunks(gone):
        Claim.objects.filter(uid__in=batch).delete()
    mirror_sql.upsert(Claim, summaries, fields=CLAIM_FIELDS, conflict=["uid"])
    return affected


ALLOCATION_ROW_FIELDS = [
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
    "pods",
    "status",
    "extended_resource",
]
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


def refresh_allocations(keys: set[DeviceKey]) -> None:
    devices = devices_by_keys(keys)
    if not devices:
        return
    allocations = allocations_by_device(keys={(d.driver, d.pool, d.name) for d in devices})
    changed = []
    for device in devices:
        before = (device.allocations, device.statuses)
        fill_allocations(device, allocations.get((device.driver, device.pool, device.name), []))
        if (device.allocations, device.statuses) != before:
            changed.append(device)
    mirror_sql.update(Device, changed, fields=ALLOCATION_FIELDS)


# --------------------------------------------------------------------------------------- rules, classes, health


def refresh_taints(
    selectors: list[JSON | None], ctx: Context, *, after_pk: int = 0, limit: int | None = None
) -> int | None:
    """Recompute effective taints of the devices any of these rule selectors (old or new) select.

    With `limit`, only the next `limit` such devices with pk > `after_pk`; returns the last pk done, or
    None once every selected device is done."""
    q: Q | None = None
    for selector in selectors:
        if selector is None:
            continue  # a missing selector selects nothing
        part = Q()
        for field_name, column in (("driver", "driver"), ("pool", "pool"), ("device", "name")):
            if selector.get(field_name):
                part &= Q(**{column: selector[field_name]})
        q = part if q is None else q | part
    if q is None:
        return None
    rows = Device.objects.filter(q, pk__gt=after_pk).order_by("pk")
    if limit is not None:
        rows = rows[:limit]
    changed = []
    last: int | None = None
    count = 0
    for device in rows.only("pk", "driver", "pool", "name", "slice_taints", *TAINT_FIELDS):
        count += 1
        last = device.pk
        before = device.taints
        fill_taints(device, ctx)
        if device.taints != before:
            changed.append(device)
    mirror_sql.update(Device, changed, fields=TAINT_FIELDS)
    return last if limit is not None and count == limit else None


def refresh_classes(ctx: Context, *, skip: set[DeviceKey]) -> None:
    """Re-evaluate every device against every class (after a DeviceClass changed); `skip` was just rebuilt."""
    wanted = [
        pk
        for pk, *key in Device.objects.values_list("pk", "driver", "pool", "name")
        if tuple(key) not in skip
    ]
    if not wanted:
        return
    devices: list[Device] = []
    for batch in chunks(wanted):
        devices.extend(
            Device.objects.filter(pk__in=batch).only(
                "pk", "driver", "pool", "name", "slice_uid", *CLASS_FIELDS
            )
        )
    slice_uids = sorted({d.slice_uid for d in devices})
    slices: dict[str, JSON] = {}
    for batch in chunks(slice_uids):
        slices.update(
            KubeObject.objects.filter(kind="resourceslices", uid__in=batch).values_list("uid", "raw")
        )
    changed = []
    for device in devices:
        raw = slices.get(device.slice_uid) or {}
        device_json = next(
            (d for d in (raw.get("spec") or {}).get("devices") or [] if d.get("name") == device.name), None
        )
        if device_json is None:
            continue
        before = device.classes
        fill_classes(device, ctx, device_json)
        if device.classes != before:
            changed.append(device)
    mirror_sql.update(Device, changed, fields=CLASS_FIELDS)


def pod_health_reports(pod: Mapping[str, Any]) -> dict[DeviceKey, JSON]:
    """Device health a pod's containers report (ResourceHealthStatus), keyed by device.

    DRA resource IDs are read as `<driver>/<pool>/<device>`; a pool name may itself contain slashes.
    """
    meta = pod.get("metadata") or {}
    pod_name = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    reports: dict[DeviceKey, JSON] = {}
    status = pod.get("status") or {}
    for container in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        for resource_status in container.get("allocatedResourcesStatus") or []:
            if not str(resource_status.get("name", "")).startswith("claim:"):
                continue
            for resource in resource_status.get("resources") or []:
                parts = str(resource.get("resourceID", "")).split("/")
                if len(parts) < 3:
                    continue
                key = (parts[0], "/".join(parts[1:-1]), parts[-1])
                reports[key] = {
                    "pod": pod_name,
                    "health": str(resource.get("health", "Unknown")),
                    "message": str(resource.get("message", "") or ""),
                }
    return reports


def refresh_health(changed_pods: dict[str, JSON | None], reporting: dict[str, set[DeviceKey]]) -> None:
    """Apply pods' health reports; `reporting` (pod uid → device keys) is kept by the mirror across batches."""
    updates: dict[DeviceKey, dict[str, JSON | None]] = defaultdict(dict)
    for uid, pod in changed_pods.items():
        new = pod_health_reports(pod) if pod is not None else {}
        old_keys = reporting.get(uid, set())
        for key in old_keys - set(new):
            updates[key][uid] = None
        for key, report in new.items():
            updates[key][uid] = report
        if new:
            reporting[uid] = set(new)
        else:
            reporting.pop(uid, None)
    if not updates:
        return
    changed = []
    for device in devices_by_keys(set(updates)):
        reports = dict(device.health_reports or {})
        for uid, report in updates[(device.driver, device.pool, device.name)].items():
            if report is None:
                reports.pop(uid, None)
            else:
                reports[uid] = report
        device.health_reports = reports
        fill_health(device)
        changed.append(device)
    mirror_sql.update(Device, changed, fields=HEALTH_FIELDS)
