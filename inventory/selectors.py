"""Read queries over the mirror. Keyword-only, typed; views, API and consumers call only these.

Strings that come from the cluster are untrusted: `clip()` caps them at settings.DRADASH_MAX_STRING
where they are rendered as free text (messages, data, YAML).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.conf import settings
from django.db.models import Count, Q, QuerySet

from dra.extended import extended_resources
from dra.quantity import Quantity
from inventory.filters import ClaimFilterSet, DeviceFilterSet, PoolFilterSet
from inventory.kube import MIRRORED_KINDS
from inventory.models import (
    ALLOCATED,
    FREE,
    SHARED,
    Claim,
    Device,
    KubeObject,
    Pool,
    WatchState,
)

JSON = dict[str, Any]

# The kinds the mirror watches, in the order pages list them.
KINDS = list(MIRRORED_KINDS)


class InvalidFilters(ValueError):
    """A filter value is not acceptable; `errors` maps the field to its messages."""

    def __init__(self, errors: Mapping[str, Any]) -> None:
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in self.errors.items()))


def clip(text: Any, limit: int | None = None) -> str:
    """Cap an untrusted string for display."""
    value = "" if text is None else str(text)
    cap = limit if limit is not None else settings.DRADASH_MAX_STRING
    return value if len(value) <= cap else value[: cap - 1] + "…"


# ----------------------------------------------------------------------------------------------- devices


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


def device_get(*, driver: str, pool: str, name: str) -> Device:
    return Device.objects.get(driver=driver, pool=pool, name=name)


def device_detail(*, device: Device) -> DeviceDetail:
    slice_obj = KubeObject.objects.filter(kind="resourceslices", uid=device.slice_uid).first()
    claim_uids = [a["claimUid"] for a in device.allocations]
    claims = list(KubeObject.objects.filter(kind="resourceclaims", uid__in=claim_uids))
    pod_uids = [p["uid"] for a in device.allocations for p in a.get("pods", [])]
    pods = list(KubeObject.objects.filter(kind="pods", uid__in=pod_uids))
    rule_names = [t["rule"] for t in device.taints if t["source"] == "rule"]
    rules = list(KubeObject.objects.filter(kind="devicetaintrules", name__in=rule_names))
    pool = Pool.objects.filter(driver=device.driver, name=device.pool).first()
    counters = pool_counters_left(pools=[pool])[pool.pk] if pool and pool.shared_counters else {}
    return DeviceDetail(
        device=device,
        slice=slice_obj,
        claims=claims,
        pods=pods,
        rules=rules,
        pool=pool,
        counters_left=counters,
    )


# ----------------------------------------------------------------------------------------------- pools


def pool_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[Pool]:
    filterset = PoolFilterSet(data=filters or {}, queryset=Pool.objects.all())
    if not filterset.is_valid():
        raise InvalidFilters(filterset.errors)
    return filterset.qs


def pool_counters_left(*, pools: list[Pool]) -> dict[int, dict[str, dict[str, str]]]:
    """What is left of each shared counter set: total minus what allocated partitionable devices consume.

    One query for all given pools. Quantities are compared as parsed numbers and shown as text.
    """
    result: dict[int, dict[str, dict[str, str]]] = {}
    wanted = [p for p in pools if p is not None and p.shared_counters]
    if not wanted:
        return {p.pk: {} for p in pools if p is not None}
    q = Q()
    for pool in wanted:
        q |= Q(driver=pool.driver, pool=pool.name)
    used: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    for driver, pool_name, consumes in (
        Device.objects.filter(q, partitionable=True)
        .exclude(allocation_state=FREE)
        .values_list("driver", "pool", "consumes_counters")
    ):
        bucket = used[(driver, pool_name)]
        for consumption in consumes or []:
            counters = bucket[consumption.get("counterSet", "")]
            for counter, spec in (consumption.get("counters") or {}).items():
                counters[counter] = counters.get(counter, 0) + _nanos(spec.get("value", "0"))
    for pool in pools:
        if pool is None:
            continue
        left: dict[str, dict[str, str]] = {}
        for counter_set, counters in (pool.shared_counters or {}).items():
            left[counter_set] = {}
            for counter, total in counters.items():
                consumed = used[(pool.driver, pool.name)][counter_set].get(counter, 0)
                left[counter_set][counter] = str(Quantity.parse(str(total)) - Quantity(consumed))
        result[pool.pk] = left
    return result


# ----------------------------------------------------------------------------------------------- classes


@dataclass
class ClassSummary:
    name: str
    obj: KubeObject
    extended_resource_names: list[str]
    total: int = 0
    allocated: int = 0
    shared: int = 0
    free: int = 0
    tainted_none: int = 0
    tainted_no_schedule: int = 0
    tainted_no_execute: int = 0
    # Free devices that cannot be used because their counters are exhausted (partitionable devices).
    blocked_by_counters: int = 0


@dataclass
class ClassOverview:
    classes: list[ClassSummary]
    warnings: list[str]


def class_overview() -> ClassOverview:
    """Per DeviceClass: devices total / allocated / shared / tainted by effect / free, and extended resources."""
    objs = list(KubeObject.objects.filter(kind="deviceclasses").order_by("name"))
    mapping = extended_resources(o.raw for o in objs)
    served, warnings = mapping.served, mapping.conflicts
    summaries = {
        o.name: ClassSummary(name=o.name, obj=o, extended_resource_names=served.get(o.name, [])) for o in objs
    }
    # Devices carry their matching classes as a list; group in Python (few columns, one query).
    rows = Device.objects.values_list(
        "classes",
        "allocation_state",
        "taint_none",
        "taint_no_schedule",
        "taint_no_execute",
        "partitionable",
        "driver",
        "pool",
        "consumes_counters",
    )
    exhausted = _exhausted_counter_sets()
    for classes, state, t_none, t_ns, t_ne, partitionable, driver, pool, consumes in rows:
        for name in classes or []:
            summary = summaries.get(name)
            if summary is None:
                continue
            summary.total += 1
            if state == ALLOCATED:
                summary.allocated += 1
            elif state == SHARED:
                summary.shared += 1
            elif partitionable and _uses_exhausted(driver, pool, consumes, exhausted):
                summary.blocked_by_counters += 1
            elif not (t_ns or t_ne):
                summary.free += 1
            summary.tainted_none += int(t_none)
            summary.tainted_no_schedule += int(t_ns)
            summary.tainted_no_execute += int(t_ne)
    return ClassOverview(classes=list(summaries.values()), warnings=warnings)


def _exhausted_counter_sets() -> dict[tuple[str, str], set[tuple[str, str]]]:
    pools = list(Pool.objects.exclude(shared_counters={}))
    left = pool_counters_left(pools=pools)
    exhausted: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for pool in pools:
        for counter_set, counters in left.get(pool.pk, {}).items():
            for counter, value in counters.items():
                if _nanos(value) <= 0:
                    exhausted.setdefault((pool.driver, pool.name), set()).add((counter_set, counter))
    return exhausted


def _uses_exhausted(
    driver: str, pool: str, consumes: list[JSON], exhausted: dict[tuple[str, str], set[tuple[str, str]]]
) -> bool:
    gone = exhausted.get((driver, pool))
    if not gone:
        return False
    return any(
        (c.get("counterSet"), name) in gone for c in consumes or [] for name in (c.get("counters") or {})
    )


def _nanos(text: Any) -> int:
    """A counter value from the cluster in nanos; a malformed one counts as 0 (validation refuses them)."""
    try:
        return Quantity.parse(str(text)).nano_value()
    except ValueError:
        return 0


def class_detail(*, name: str) -> tuple[KubeObject, ClassSummary | None]:
    obj = KubeObject.objects.get(kind="deviceclasses", name=name)
    overview = class_overview()
    return obj, next((s for s in overview.classes if s.name == name), None)


# ----------------------------------------------------------------------------------------------- claims


def claim_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[Claim]:
    filterset = ClaimFilterSet(data=filters or {}, queryset=Claim.objects.all())
    if not filterset.is_valid():
        raise InvalidFilters(filterset.errors)
    return filterset.qs


@dataclass
class ClaimDetail:
    claim: Claim
    obj: KubeObject
    devices: list[Device]
    pods: list[KubeObject]
    # One row per allocation result: {request, subrequest, driver, pool, device, adminAccess, shareID,
    # consumedCapacity, tolerations, status: {conditions, networkData, data} | None}
    results: list[JSON]
    requests: list[JSON]
    # For the scheduler's extended-resource claim: the owning pod and, from its
    # status.extendedResourceClaimStatus, which container's extended resource each request serves.
    owner_pod: KubeObject | None = None
    extended_resources: list[JSON] = field(default_factory=list)


def claim_detail(*, namespace: str, name: str) -> ClaimDetail:
    obj = KubeObject.objects.get(kind="resourceclaims", namespace=namespace, name=name)
    claim = Claim.objects.get(uid=obj.uid)
    status = obj.raw.get("status") or {}
    allocation = status.get("allocation") or {}
    device_status = {
        (d.get("driver"), d.get("pool"), d.get("device"), d.get("shareID") or ""): d
        for d in status.get("devices") or []
    }
    results: list[JSON] = []
    q = Q(pk__in=[])
    for result in (allocation.get("devices") or {}).get("results") or []:
        main, _, sub = str(result.get("request", "")).partition("/")
        key = (result.get("driver"), result.get("pool"), result.get("device"), result.get("shareID") or "")
        entry = device_status.get(key)
        results.append(
            {
                "request": main,
                "subrequest": sub,
                "driver": result.get("driver"),
                "pool": result.get("pool"),
                "device": result.get("device"),
                "adminAccess": bool(result.get("adminAccess")),
                "shareID": result.get("shareID") or "",
                "consumedCapacity": result.get("consumedCapacity") or {},
                "tolerations": result.get("tolerations") or [],
                "status": device_status_view(entry) if entry else None,
            }
        )
        q |= Q(driver=result.get("driver"), pool=result.get("pool"), name=result.get("device"))
    devices = list(Device.objects.filter(q))
    pod_uids = [r.get("uid") for r in status.get("reservedFor") or [] if r.get("resource") == "pods"]
    pods = list(KubeObject.objects.filter(kind="pods", uid__in=pod_uids))
    requests = list(((obj.raw.get("spec") or {}).get("devices") or {}).get("requests") or [])
    owner = (
        KubeObject.objects.filter(kind="pods", namespace=namespace, name=claim.owner_pod).first()
        if claim.owner_pod
        else None
    )
    extended: list[JSON] = []
    if owner is not None:
        mapping = (owner.raw.get("status") or {}).get("extendedResourceClaimStatus") or {}
        if mapping.get("resourceClaimName") == name:
            extended = [
                {
                    "containerName": clip(m.get("containerName"), 253),
                    "resourceName": clip(m.get("resourceName"), 316),
                    "requestName": clip(m.get("requestName"), 253),
                }
                for m in mapping.get("requestMappings") or []
            ]
    return ClaimDetail(
        claim=claim,
        obj=obj,
        devices=devices,
        pods=pods,
        results=results,
        requests=requests,
        owner_pod=owner,
        extended_resources=extended,
    )


def device_status_view(entry: Mapping[str, Any]) -> JSON:
    """claim.status.devices[] entry with its untrusted strings capped."""
    network = entry.get("networkData") or {}
    data = entry.get("data")
    return {
        "conditions": [
            {
                "type": clip(c.get("type"), 316),
                "status": clip(c.get("status"), 16),
                "reason": clip(c.get("reason"), 1024),
                "message": clip(c.get("message")),
                "lastTransitionTime": clip(c.get("lastTransitionTime"), 40),
            }
            for c in entry.get("conditions") or []
        ],
        "networkData": {
            "interfaceName": clip(network.get("interfaceName"), 256),
            "hardwareAddress": clip(network.get("hardwareAddress"), 128),
            "ips": [clip(ip, 64) for ip in network.get("ips") or []],
        }
        if network
        else None,
        "data": clip(yaml.safe_dump(data, default_flow_style=False, sort_keys=True))
        if data is not None
        else "",
    }


# ----------------------------------------------------------------------------------------------- taint rules


@dataclass
class TaintRuleSummary:
    obj: KubeObject
    name: str
    selector: JSON | None
    taint: JSON
    matched_devices: int
    eviction_condition: JSON | None  # the EvictionInProgress condition, if the controller wrote one


def taint_rule_list() -> list[TaintRuleSummary]:
    """Rules with the number of devices they select: one query, then O(1) per rule.

    A selector names any subset of driver / pool / device, so the devices are counted once per subset
    (8 counters); a rule's count is a lookup in the counter of the fields it names.
    """
    rules = list(KubeObject.objects.filter(kind="devicetaintrules").order_by("name"))
    if not rules:
        return []
    fields = ("driver", "pool", "device")
    masks = [tuple(f for i, f in enumerate(fields) if bits >> i & 1) for bits in range(8)]
    counters: dict[tuple[str, ...], Counter[tuple[str, ...]]] = {m: Counter() for m in masks}
    for driver, pool, name in Device.objects.values_list("driver", "pool", "name"):
        values = {"driver": driver, "pool": pool, "device": name}
        for mask in masks:
            counters[mask][tuple(values[f] for f in mask)] += 1
    summaries = []
    for rule in rules:
        selector = (rule.raw.get("spec") or {}).get("deviceSelector")
        if selector is None:
            matched = 0  # a missing selector selects nothing; an empty one selects everything
        else:
            mask = tuple(f for f in fields if selector.get(f))
            matched = counters[mask][tuple(str(selector[f]) for f in mask)]
        summaries.append(_rule_summary(rule, matched))
    return summaries


def _rule_summary(rule: KubeObject, matched: int) -> TaintRuleSummary:
    spec = rule.raw.get("spec") or {}
    conditions = (rule.raw.get("status") or {}).get("conditions") or []
    eviction = next((c for c in conditions if c.get("type") == "EvictionInProgress"), None)
    if eviction is not None:
        eviction = {**eviction, "message": clip(eviction.get("message"))}
    return TaintRuleSummary(
        obj=rule,
        name=rule.name,
        selector=spec.get("deviceSelector"),
        taint=spec.get("taint") or {},
        matched_devices=matched,
        eviction_condition=eviction,
    )


def taint_rule_detail(*, name: str) -> tuple[TaintRuleSummary, QuerySet[Device]]:
    rule = KubeObject.objects.get(kind="devicetaintrules", name=name)
    devices = rule_devices(spec=rule.raw.get("spec") or {})
    return _rule_summary(rule, devices.count()), devices


def rule_devices(*, spec: Mapping[str, Any]) -> QuerySet[Device]:
    """Devices a DeviceTaintRule spec selects (empty selector = all, missing = none)."""
    selector = spec.get("deviceSelector")
    if selector is None:
        return Device.objects.none()
    q = Q()
    for field_name, column in (("driver", "driver"), ("pool", "pool"), ("device", "name")):
        if selector.get(field_name):
            q &= Q(**{column: selector[field_name]})
    return Device.objects.filter(q).order_by("driver", "pool", "name")


# ----------------------------------------------------------------------------------------------- nodes


@dataclass
class NodeSummary:
    name: str
    obj: KubeObject | None
    device_count: int
    allocated: int
    tainted: int


@dataclass
class NodeDetail:
    name: str
    obj: KubeObject | None
    # NUMA node (None = unknown) → devices on it, so GPUs and NICs that share a numaNode sit together.
    numa_groups: list[tuple[int | None, list[Device]]]
    pods: list[KubeObject]


def node_list() -> list[NodeSummary]:
    nodes = {o.name: o for o in KubeObject.objects.filter(kind="nodes")}
    counts = {
        row["node_name"]: row
        for row in Device.objects.exclude(node_name="")
        .values("node_name")
        .annotate(
            total=Count("id"),
            allocated=Count("id", filter=~Q(allocation_state=FREE)),
            tainted=Count("id", filter=Q(tainted=True)),
        )
    }
    names = sorted(set(nodes) | set(counts))
    return [
        NodeSummary(
            name=n,
            obj=nodes.get(n),
            device_count=counts.get(n, {}).get("total", 0),
            allocated=counts.get(n, {}).get("allocated", 0),
            tainted=counts.get(n, {}).get("tainted", 0),
        )
        for n in names
    ]


def node_detail(*, name: str) -> NodeDetail:
    obj = KubeObject.objects.filter(kind="nodes", name=name).first()
    devices = list(Device.objects.filter(node_name=name).order_by("driver", "name"))
    if obj is None and not devices:
        raise KubeObject.DoesNotExist(f"node {name!r} is not in the mirror")
    groups: dict[int | None, list[Device]] = defaultdict(list)
    for device in devices:
        groups[device.numa_node].append(device)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] if kv[0] is not None else 0))
    pods = list(KubeObject.objects.filter(kind="pods", index_key=name).order_by("namespace", "name"))
    return NodeDetail(name=name, obj=obj, numa_groups=ordered, pods=pods)


# ----------------------------------------------------------------------------------------------- health, YAML


def watch_health() -> QuerySet[WatchState]:
    return WatchState.objects.all().order_by("kind")


def object_get(*, kind: str, name: str, namespace: str = "") -> KubeObject:
    return KubeObject.objects.get(kind=kind, namespace=namespace, name=name)


def object_yaml(*, obj: KubeObject) -> str:
    """The object as the cluster has it, as YAML (managedFields dropped; long strings capped)."""
    raw = dict(obj.raw)
    metadata = dict(raw.get("metadata") or {})
    metadata.pop("managedFields", None)
    raw["metadata"] = metadata
    return yaml.safe_dump(_clip_strings(raw), default_flow_style=False, sort_keys=False)


def _clip_strings(value: Any) -> Any:
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, list):
        return [_clip_strings(v) for v in value]
    if isinstance(value, dict):
        return {clip(k, 316): _clip_strings(v) for k, v in value.items()}
    return value
