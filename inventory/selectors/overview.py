"""The Overview's totals and what the cluster serves (class numbers come from `selectors.classes`)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, Sum

from inventory.models import FREE, Claim, ClusterInfo, DeviceCount, KubeObject
from inventory.selectors.common import RULES


def overview_totals() -> dict[str, int]:
    """The device totals from the maintained counters (a few dozen rows, not every device)."""
    totals = DeviceCount.objects.aggregate(
        devices=Sum("n"),
        allocated=Sum("n", filter=~Q(allocation_state=FREE)),
        tainted=Sum("n", filter=Q(tainted=True)),
        no_execute=Sum("n", filter=Q(taint_no_execute=True)),
        incomplete=Sum("n", filter=Q(pool_complete=False)),
    )
    return {k: int(v or 0) for k, v in totals.items()} | {
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
