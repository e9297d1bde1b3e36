"""Pod rows from Pods: what the Pods list shows and filters by (kubectl's STATUS, why it waits, the claims it
uses)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from dra.pods import dra_extended_resources, pod_claims, pod_phase, pod_status, pod_waiting
from inventory.mirror import sql
from inventory.mirror.derive.common import JSON, chunks
from inventory.models import Pod

INT_MAX = 2**31 - 1  # an integer column's largest value
POD_FIELDS = [
    "uid",
    "namespace",
    "name",
    "node_name",
    "phase",
    "status",
    "ready",
    "restarts",
    "claims",
    "claim_count",
    "extended_resources",
    "created",
    "waiting_reason",
    "waiting_message",
]


def pod_values(pod: JSON) -> dict[str, Any]:
    """The Pod row's columns of one pod (cut to the columns' lengths: a container's waiting reason is free
    text, and an over-long value must not fail the mirror's transaction on PostgreSQL)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    summary = pod_status(pod)
    waiting = pod_waiting(pod)
    claims = [
        {"podClaim": ref.pod_claim, "name": ref.name, "source": ref.source, "template": ref.template}
        for ref in pod_claims(pod)
    ]
    return {
        "uid": str(meta.get("uid", ""))[:64],
        "namespace": str(meta.get("namespace", "") or "")[:63],
        "name": str(meta.get("name", ""))[:253],
        "node_name": str(spec.get("nodeName") or "")[:253],
        "phase": pod_phase(pod)[:16],
        "status": summary.status[:128],
        "ready": summary.ready_text[:16],
        "restarts": min(summary.restarts, INT_MAX),
        "claims": claims,
        "claim_count": len(claims),
        "extended_resources": [{"name": n, "count": c} for n, c in dra_extended_resources(pod).items()],
        "created": str(meta.get("creationTimestamp", "") or "")[:40],
        "waiting_reason": waiting.reason if waiting else "",
        "waiting_message": waiting.message if waiting else "",
    }


def replace_pods(changed: dict[str, JSON | None]) -> None:
    """Rewrite the Pod rows of changed pods (None = deleted), by uid: a batch costs its pods."""
    gone = [uid for uid, pod in changed.items() if pod is None]
    for batch in chunks(gone):
        Pod.objects.filter(uid__in=batch).delete()
    rows = [
        SimpleNamespace(**(pod_values(pod) | {"uid": uid})) for uid, pod in changed.items() if pod is not None
    ]
    sql.upsert(Pod, rows, fields=POD_FIELDS, conflict=["uid"])
