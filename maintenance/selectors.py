"""Reads of the maintenance room: device selection from the inventory, preview summaries, the audit log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from django.db.models import QuerySet

from maintenance.models import AuditEntry, Maintenance
from maintenance.planning import LABEL_MAINTENANCE, DeviceRef

AUDIT_FILTERS = ("rule", "actor", "action", "source", "maintenance")


def selectable_devices(*, filters: Mapping[str, str], limit: int) -> tuple[list[Any], int, str]:
    """The inventory's devices matching the operator's filters: (first `limit`, total, filter error)."""
    from inventory.selectors.devices import device_filterset

    filterset = device_filterset(filters=filters)
    if not filterset.is_valid():
        message = "; ".join(f"{field}: {' '.join(errs)}" for field, errs in filterset.errors.items())
        return [], 0, message
    queryset = filterset.qs
    return list(queryset[:limit]), queryset.count(), ""


def device_refs(*, filters: Mapping[str, str]) -> list[DeviceRef]:
    from inventory.selectors.devices import device_filterset

    filterset = device_filterset(filters=filters)
    if not filterset.is_valid():
        return []
    return [DeviceRef(d, p, n) for d, p, n in filterset.qs.values_list("driver", "pool", "name")]


def parse_device_refs(values: list[str]) -> list[DeviceRef]:
    """Form values `driver|pool|device` (the checkbox values of the selection table)."""
    refs = []
    for value in values:
        parts = value.split("|")
        if len(parts) == 3 and all(parts):
            refs.append(DeviceRef(*parts))
    return refs


def preview_run(*, maintenance: Maintenance) -> Any:
    if not maintenance.preview_run_id:
        return None
    from allocation.models import WhatIfRun

    return WhatIfRun.objects.filter(pk=maintenance.preview_run_id).first()


def preview_summary(*, maintenance: Maintenance) -> dict[str, Any]:
    """The blast radius from the latest preview run, restated on the enforce confirmation."""
    run = preview_run(maintenance=maintenance)
    summary: dict[str, Any] = {
        "run": run,
        "ready": False,
        "done": run is not None and run.state not in ("pending", "running"),
    }
    if run is None or run.state != "succeeded" or not isinstance(run.result, dict):
        return summary
    result = run.result
    counts = result.get("summary") or {}
    pods = result.get("pods") or []
    summary.update(
        ready=True,
        devices=counts.get("devices", 0),
        claims=counts.get("claims", 0),
        pods=counts.get("evicted", 0),
        namespaces=sorted({p.get("namespace", "") for p in pods if p.get("evicted")}),
        pdbs=result.get("budgets") or [],
        unschedulable=result.get("pending_unschedulable") or [],
        not_reallocatable=counts.get("not_reallocatable", 0),
        result=result,
    )
    return summary


def audit_list(*, params: Mapping[str, str]) -> tuple[QuerySet[AuditEntry], dict[str, str]]:
    filters = {k: params[k] for k in AUDIT_FILTERS if params.get(k)}
    entries = AuditEntry.objects.select_related("maintenance").all()
    if "rule" in filters:
        entries = entries.filter(rule_name__icontains=filters["rule"])
    if "actor" in filters:
        entries = entries.filter(actor=filters["actor"])
    if "action" in filters:
        entries = entries.filter(action=filters["action"])
    if "source" in filters:
        entries = entries.filter(source=filters["source"])
    if "maintenance" in filters:
        entries = entries.filter(maintenance_id=filters["maintenance"])
    return entries, filters


def audit_observe_cluster() -> int:
    """Record rule changes the mirror saw that dradash did not make (kubectl, GitOps, other tools).

    A rule generation dradash has not recorded is a change from outside; a recorded rule the mirror no
    longer has was deleted. Returns the number of entries written. Idempotent.
    """
    from inventory.models import KubeObject

    written = 0
    rules = list(KubeObject.objects.filter(kind="devicetaintrules").only("uid", "name", "generation", "raw"))
    known = set(AuditEntry.objects.exclude(rule_uid="").values_list("rule_uid", "rule_generation"))
    known_uids = {uid for uid, _ in known}
    for rule in rules:
        if (rule.uid, rule.generation) in known:
            continue
        labels = rule.raw.get("metadata", {}).get("labels") or {}
        maintenance = Maintenance.objects.filter(pk=labels.get(LABEL_MAINTENANCE, "")).first()
        AuditEntry.objects.create(
            actor="cluster",
            source=AuditEntry.SOURCE_CLUSTER,
            action="seen-update" if rule.uid in known_uids else "seen-create",
            rule_name=rule.name,
            rule_uid=rule.uid,
            rule_generation=rule.generation,
            maintenance=maintenance,
            effect=str(rule.raw.get("spec", {}).get("taint", {}).get("effect", ""))[:16],
            yaml=yaml.safe_dump(rule.raw, sort_keys=False),
            message="seen by the mirror" + (" (written by dradash)" if maintenance else ""),
        )
        written += 1
    present = {r.uid for r in rules}
    deleted_seen = set(
        AuditEntry.objects.filter(action__in=("seen-delete", "delete")).values_list("rule_uid", flat=True)
    )
    for uid, name in AuditEntry.objects.exclude(rule_uid="").values_list("rule_uid", "rule_name").distinct():
        if uid not in present and uid not in deleted_seen:
            AuditEntry.objects.create(
                actor="cluster", source=AuditEntry.SOURCE_CLUSTER, action="seen-delete", rule_name=name,
                rule_uid=uid, message="no longer in the cluster",
            )  # fmt: skip
            deleted_seen.add(uid)
            written += 1
    return written
