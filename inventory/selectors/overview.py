"""The Overview's totals and what the cluster serves (class numbers come from `selectors.classes`)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from inventory.models import FREE, Claim, ClusterInfo, Device, KubeObject
from inventory.selectors.common import RULES


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
