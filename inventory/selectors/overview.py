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
    # In the (kind, namespace, name) index's order (Nodes have no namespace): the first page of the
    # index, not every Node sorted.
    rows = (
        KubeObject.objects.filter(kind="nodes", namespace="")
        .order_by("kind", "namespace", "name")
        .values_list("name", "raw__status__conditions")
    )
    for name, conditions in rows[:node_limit]:
        conditions = conditions if isinstance(conditions, list) else []
        ready = any(
            isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
        )
        nodes.append({"name": name, "ready": ready})
    return {
        "info": info,
        "dra_versions": [v for v in (info.api_versions if info else []) if v.startswith("resource.k8s.io/")],
        "nodes": nodes,
        "node_count": KubeObject.objects.filter(kind="nodes").count(),
    }
