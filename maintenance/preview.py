"""The preview of a maintenance and whether it still holds.

A preview is a taint-impact what-if run. With it we record what it was computed over — the draft (its
rules and taint) and the allocation state of the devices the rules select (which claims hold them,
each claim's resourceVersion, which covers its reservations and tolerations). Enforcing compares that
with the mirror now: a preview whose basis changed is stale, and the operator is told what changed.

The basis is taken when the preview is requested; the worker reads its snapshot a moment later, so a
change in between makes the preview stale (refused) rather than silently wrong.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from inventory.models import Allocation, KubeObject
from maintenance.models import Maintenance, MaintenancePreview
from maintenance.scope import selected_devices

MAX_CHANGES_LISTED = 5


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def draft_hash(maintenance: Maintenance) -> str:
    return _sha({"rules": maintenance.rules, "key": maintenance.taint_key, "value": maintenance.taint_value})


def preview_basis(maintenance: Maintenance) -> dict[str, Any]:
    devices = selected_devices(maintenance.rules)
    keys = {(d[0], d[1], d[2]) for d in devices}
    allocated: dict[str, list[str]] = {}
    if keys:
        rows = Allocation.objects.filter(
            driver__in={k[0] for k in keys}, pool__in={k[1] for k in keys}, device__in={k[2] for k in keys}
        ).values_list("driver", "pool", "device", "claim_uid")
        for driver, pool, device, claim_uid in rows:
            if (driver, pool, device) in keys:
                allocated.setdefault(f"{driver}/{pool}/{device}", []).append(claim_uid)
    claim_uids = sorted({uid for uids in allocated.values() for uid in uids})
    claims = {
        uid: f"{namespace}/{name}@{rv}"
        for uid, namespace, name, rv in KubeObject.objects.filter(
            kind="resourceclaims", uid__in=claim_uids
        ).values_list("uid", "namespace", "name", "resource_version")
    }
    return {
        "draft": draft_hash(maintenance),
        "devices": {"count": len(devices), "hash": _sha([list(d[:3]) for d in devices])},
        "allocated": {k: sorted(v) for k, v in sorted(allocated.items())},
        "claims": claims,
    }


def basis_fingerprint(basis: dict[str, Any]) -> str:
    return _sha(basis)


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_CHANGES_LISTED])
    return shown + (f" and {len(items) - MAX_CHANGES_LISTED} more" if len(items) > MAX_CHANGES_LISTED else "")


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _were(items: list[str]) -> str:
    return "was" if len(items) == 1 else "were"


def basis_changes(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What changed between the preview's basis and the cluster now, in words an operator can check."""
    changes: list[str] = []
    if before.get("draft") != now.get("draft"):
        changes.append("the draft's rules or taint changed")
    old_devices, new_devices = before.get("devices") or {}, now.get("devices") or {}
    if old_devices != new_devices:
        changes.append(
            f"the rules now select {_n(new_devices.get('count', 0), 'device')} "
            f"(the preview saw {old_devices.get('count', 0)})"
        )
    old_alloc, new_alloc = before.get("allocated") or {}, now.get("allocated") or {}
    newly = sorted(set(new_alloc) - set(old_alloc))
    freed = sorted(set(old_alloc) - set(new_alloc))
    moved = sorted(k for k in set(old_alloc) & set(new_alloc) if old_alloc[k] != new_alloc[k])
    if newly:
        changes.append(
            f"{_n(len(newly), 'selected device')} {_were(newly)} allocated since: {_listed(newly)}"
        )
    if freed:
        changes.append(f"{_n(len(freed), 'selected device')} {_were(freed)} released since: {_listed(freed)}")
    if moved:
        changes.append(
            f"{_n(len(moved), 'selected device')} now {'serves' if len(moved) == 1 else 'serve'} another claim: "
            f"{_listed(moved)}"
        )
    old_claims, new_claims = before.get("claims") or {}, now.get("claims") or {}
    edited = sorted(
        new_claims[uid].rsplit("@", 1)[0]
        for uid in set(old_claims) & set(new_claims)
        if old_claims[uid] != new_claims[uid]
    )
    if edited:
        changes.append(
            f"{_n(len(edited), 'claim')} on these devices changed (reservations or tolerations): {_listed(edited)}"
        )
    if not changes and basis_fingerprint(before) != basis_fingerprint(now):
        changes.append("the selected devices' allocations changed")
    return changes


#: how many of the pods a preview would evict the maintenance page names (the count is always shown)
EVICTED_PODS_NAMED = 10


@dataclass
class PreviewStatus:
    """The latest preview of a maintenance as enforcing sees it."""

    preview: MaintenancePreview | None = None
    run: Any = None
    state: str = "none"  # none | pending | running | succeeded | failed | cancelled | timed_out | missing
    stale: bool = False
    changes: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        """Succeeded and still describes the cluster: enforcing may rely on it."""
        return self.state == "succeeded" and not self.stale

    @property
    def result(self) -> dict[str, Any]:
        result = getattr(self.run, "result", None)
        return result if isinstance(result, dict) else {}

    @property
    def evicted_pods(self) -> list[dict[str, Any]]:
        """The pods the preview says NoExecute would evict, the first EVICTED_PODS_NAMED of them (the run's
        page lists them all)."""
        pods = self.result.get("pods")
        evicted = (
            [p for p in pods if isinstance(p, dict) and p.get("evicted")] if isinstance(pods, list) else []
        )
        return evicted[:EVICTED_PODS_NAMED]

    @property
    def evicted_not_named(self) -> int:
        summary = self.result.get("summary")
        evicted = summary.get("evicted") if isinstance(summary, dict) else None
        return max(0, evicted - len(self.evicted_pods)) if isinstance(evicted, int) else 0

    @property
    def run_id(self) -> str:
        return self.preview.run_id if self.preview is not None else ""

    def as_dict(self) -> dict[str, Any]:
        return {"run": self.run_id, "state": self.state, "stale": self.stale, "ready": self.ready,
                "changes": self.changes}  # fmt: skip


def latest_preview(maintenance: Maintenance) -> MaintenancePreview | None:
    return maintenance.previews.order_by("-requested_at", "-id").first()


def preview_status(maintenance: Maintenance, *, check_stale: bool = True) -> PreviewStatus:
    from allocation.models import WhatIfRun

    preview = latest_preview(maintenance)
    if preview is None:
        return PreviewStatus()
    run = WhatIfRun.objects.filter(pk=preview.run_id).first()
    status = PreviewStatus(preview=preview, run=run, state=str(run.state) if run is not None else "missing")
    if check_stale and status.state == "succeeded":
        now = preview_basis(maintenance)
        if basis_fingerprint(now) != preview.fingerprint:
            status.stale = True
            status.changes = basis_changes(preview.basis, now)
    return status
