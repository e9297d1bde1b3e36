"""Read queries that only the pages need (the shared ones live in inventory.selectors)."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q, QuerySet

from dra.extended import extended_resources
from inventory.models import ALLOCATED, FREE, SHARED, Claim, ClusterInfo, Device, KubeObject, Pool, WatchState
from inventory.selectors import ClassOverview, ClassSummary, TaintRuleSummary, _nanos, pool_counters_left
from inventory.selectors import _rule_summary as rule_summary


def live_version() -> str:
    """A short token that changes whenever the mirror applies anything (one query over ~10 rows).

    Pages render it; the live socket and the polling fallback compare it to decide whether to refresh.
    """
    rows = WatchState.objects.order_by("kind").values_list(
        "kind", "resource_version", "state", "object_count"
    )
    digest = hashlib.sha1(repr(list(rows)).encode(), usedforsecurity=False)
    return digest.hexdigest()[:16]


# ---- kinds as the mirror stores them (KubeObject.kind: the plural resource name) ----
SLICES = "resourceslices"
CLASSES = "deviceclasses"
CLAIMS = "resourceclaims"
RULES = "devicetaintrules"
PODS = "pods"
NODES = "nodes"

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def kube_object(*, kind: str, name: str, namespace: str = "") -> KubeObject | None:
    return KubeObject.objects.filter(kind=kind, namespace=namespace, name=name).first()


def kube_object_by_uid(*, kind: str, uid: str) -> KubeObject | None:
    return KubeObject.objects.filter(kind=kind, uid=uid).first()


def overview_totals() -> dict[str, int]:
    return Device.objects.aggregate(
        devices=Count("id"),
        allocated=Count("id", filter=~Q(allocation_state=FREE)),
        tainted=Count("id", filter=Q(tainted=True)),
        no_execute=Count("id", filter=Q(taint_no_execute=True)),
        incomplete=Count("id", filter=Q(pool_complete=False)),
    ) | {
        "claims": Claim.objects.count(),
        "pending_claims": Claim.objects.filter(state="pending").count(),
        "rules": KubeObject.objects.filter(kind=RULES).count(),
    }


# ---- devices ----


DEVICE_ROW_FIELDS = (
    "id",
    "driver",
    "pool",
    "name",
    "node_name",
    "numa_node",
    "classes",
    "taints",
    "allocation_state",
    "admin_access",
    "allocations",
    "health",
    "pool_complete",
)


def device_rows(devices: QuerySet[Device]) -> Iterator[dict[str, Any]]:
    """What each row of the Devices table (and its CSV/JSON export) shows.

    Reads only the shown columns as plain values: building model instances and decoding every JSON
    column costs more than the query itself at a page of a few hundred rows.
    """
    for d in devices.values(*DEVICE_ROW_FIELDS).iterator(chunk_size=2000):
        allocations = d["allocations"] or []
        yield {
            "id": d["id"],
            "driver": d["driver"],
            "pool": d["pool"],
            "device": d["name"],
            "node": d["node_name"],
            "numa": d["numa_node"],
            "classes": list(d["classes"] or []),
            "taints": [
                {
                    "key": t.get("key", ""),
                    "value": t.get("value", ""),
                    "effect": t.get("effect", ""),
                    "source": t.get("source", ""),
                    "rule": t.get("rule", ""),
                }
                for t in d["taints"] or []
            ],
            "state": d["allocation_state"],
            "adminAccess": d["admin_access"],
            "claims": [
                f"{a.get('namespace', '')}/{a.get('claim', '')}" for a in allocations if a.get("claim")
            ],
            "pods": [
                f"{pod.get('namespace', '')}/{pod.get('name', '')}"
                for a in allocations
                for pod in a.get("pods") or []
            ],
            "health": d["health"],
            "poolComplete": d["pool_complete"],
        }


def device_filter_choices() -> dict[str, list[str]]:
    """Values for the Devices filter dropdowns (distinct drivers, classes; nodes and pools are free text)."""
    classes = sorted(KubeObject.objects.filter(kind=CLASSES).values_list("name", flat=True))
    drivers = sorted(set(Pool.objects.values_list("driver", flat=True)))
    return {"classes": classes, "drivers": drivers}


# ---- nodes ----


@dataclass
class NodeLayout:
    name: str
    numa: list[tuple[str, list[Device]]]  # (NUMA label, devices), "no NUMA node" last
    device_count: int
    labels: dict[str, str]
    uid: str = ""


def node_layouts(*, names: list[str]) -> list[NodeLayout]:
    """Devices per node grouped by their numaNode attribute: which GPUs and NICs share a NUMA node."""
    by_node: dict[str, dict[int | None, list[Device]]] = {n: defaultdict(list) for n in names}
    fields = (
        "id",
        "driver",
        "pool",
        "name",
        "node_name",
        "numa_node",
        "classes",
        "allocation_state",
        "max_taint_effect",
        "claim_namespace",
        "claim_name",
        "attributes_flat",
    )
    for device in Device.objects.filter(node_name__in=names).only(*fields).order_by("driver", "name"):
        by_node[device.node_name][device.numa_node].append(device)
    node_objs = {
        o.name: o for o in KubeObject.objects.filter(kind=NODES, name__in=names).only("name", "uid", "raw")
    }
    labels = {name: ((o.raw.get("metadata") or {}).get("labels") or {}) for name, o in node_objs.items()}
    out = []
    for name in names:
        groups = by_node[name]
        numa = [(f"NUMA {k}", groups[k]) for k in sorted(k for k in groups if k is not None)]
        if None in groups:
            numa.append(("no NUMA node", groups[None]))
        out.append(
            NodeLayout(
                name=name,
                numa=numa,
                device_count=sum(len(v) for v in groups.values()),
                labels=labels.get(name, {}),
                uid=node_objs[name].uid if name in node_objs else "",
            )
        )
    return out


def node_names(*, q: str = "") -> list[str]:
    """Every node that is a Node object or has devices, sorted."""
    nodes = set(KubeObject.objects.filter(kind=NODES).values_list("name", flat=True))
    nodes |= set(Device.objects.exclude(node_name="").values_list("node_name", flat=True).distinct())
    return sorted(n for n in nodes if q.lower() in n.lower())


def claim_state_counts() -> dict[str, int]:
    counts = dict(Claim.objects.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    return {state: counts.get(state, 0) for state in ("pending", "allocated", "reserved")}


# ---- overview at scale ----


def class_overview_counts() -> ClassOverview:
    """`inventory.selectors.class_overview`, counted by the database instead of row by row in Python.

    Same numbers (a test holds them equal); one GROUP BY query, plus a look at the free partitionable
    devices only, whose shared counters may be used up. The overview page is re-rendered
    on every live change, so this keeps it cheap at 10,000 devices.
    """
    objs = list(KubeObject.objects.filter(kind=CLASSES).order_by("name"))
    mapping = extended_resources(o.raw for o in objs)
    served, warnings = mapping.served, mapping.conflicts
    if not objs:
        return ClassOverview(classes=[], warnings=warnings)
    summaries = {
        o.name: ClassSummary(name=o.name, obj=o, extended_resource_names=served.get(o.name, [])) for o in objs
    }
    # Devices with the same classes, state and taint flags are counted together: a few dozen groups.
    groups = Device.objects.values_list(
        "class_index", "allocation_state", "taint_none", "taint_no_schedule", "taint_no_execute"
    ).annotate(n=Count("id"))
    for class_index, state, t_none, t_ns, t_ne, n in groups:
        for name in class_index.split():
            summary = summaries.get(name)
            if summary is None:
                continue
            summary.total += n
            summary.allocated += n if state == ALLOCATED else 0
            summary.shared += n if state == SHARED else 0
            summary.free += n if state == FREE and not (t_ns or t_ne) else 0
            summary.tainted_none += n if t_none else 0
            summary.tainted_no_schedule += n if t_ns else 0
            summary.tainted_no_execute += n if t_ne else 0
    blocked, blocked_untainted = _counter_blocked_per_class()
    for name, summary in summaries.items():
        summary.blocked_by_counters = blocked.get(name, 0)
        summary.free -= blocked_untainted.get(name, 0)
    return ClassOverview(classes=list(summaries.values()), warnings=warnings)


def _counter_blocked_per_class() -> tuple[dict[str, int], dict[str, int]]:
    """Free partitionable devices whose pool has used up a counter they consume: per class, all and untainted."""
    pools = list(Pool.objects.exclude(shared_counters={}))
    if not pools:
        return {}, {}
    left = pool_counters_left(pools=pools)
    exhausted: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for pool in pools:
        for counter_set, counters in left.get(pool.pk, {}).items():
            for counter, value in counters.items():
                if _nanos(value) <= 0:
                    exhausted.setdefault((pool.driver, pool.name), set()).add((counter_set, counter))
    blocked: dict[str, int] = defaultdict(int)
    untainted: dict[str, int] = defaultdict(int)
    if not exhausted:
        return blocked, untainted
    candidates = Device.objects.filter(partitionable=True, allocation_state=FREE).values_list(
        "classes", "driver", "pool", "consumes_counters", "taint_no_schedule", "taint_no_execute"
    )
    for classes, driver, pool_name, consumes, no_schedule, no_execute in candidates:
        gone = exhausted.get((driver, pool_name))
        if not gone or not any(
            (c.get("counterSet"), name) in gone for c in consumes or [] for name in (c.get("counters") or {})
        ):
            continue
        for name in classes or []:
            blocked[name] += 1
            if not (no_schedule or no_execute):
                untainted[name] += 1
    return blocked, untainted


def taint_rule_counts() -> list[TaintRuleSummary]:
    """`inventory.selectors.taint_rule_list` with the matched devices counted by one aggregate query.

    The shared selector tests every device against every rule in Python; at 10,000 devices and a few
    dozen rules that is a second per render, and the page re-renders on every live change.
    """
    rules = list(KubeObject.objects.filter(kind=RULES).order_by("name"))
    aggregates: dict[str, Any] = {}
    for i, rule in enumerate(rules):
        selector = (rule.raw.get("spec") or {}).get("deviceSelector")
        if selector is None:
            continue  # an absent selector matches no device
        q = Q()
        for field_name, column in (("driver", "driver"), ("pool", "pool"), ("device", "name")):
            if selector.get(field_name):
                q &= Q(**{column: selector[field_name]})
        aggregates[f"r{i}"] = Count("id", filter=q) if q else Count("id")
    counts = Device.objects.aggregate(**aggregates) if aggregates else {}
    return [rule_summary(rule, counts.get(f"r{i}", 0)) for i, rule in enumerate(rules)]


def cluster_summary(*, node_limit: int = 64) -> dict[str, Any]:
    """What the cluster serves (as the mirror read it at start) and its nodes, for the overview."""
    info = ClusterInfo.objects.first()
    nodes = []
    rows = KubeObject.objects.filter(kind="nodes").order_by("name").values_list("name", "raw")
    for name, raw in rows[:node_limit]:
        conditions = (raw.get("status") or {}).get("conditions") or []
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        nodes.append({"name": name, "ready": ready})
    return {
        "info": info,
        "dra_versions": [v for v in (info.api_versions if info else []) if v.startswith("resource.k8s.io/")],
        "nodes": nodes,
        "node_count": KubeObject.objects.filter(kind="nodes").count(),
    }
