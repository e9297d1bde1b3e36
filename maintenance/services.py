"""Writes of the maintenance room: draft → (preview) → apply with an effect → undo.

Every write to the cluster is dry-run first for all rules; a failure in the real writes rolls back what
was already written, so the cluster never holds half a maintenance. The draft stays, with the error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import yaml
from django.db import transaction
from django.utils import timezone

from dradash.realtime import broadcast
from maintenance import cluster
from maintenance.cluster import ClusterWriteError
from maintenance.models import AuditEntry, Maintenance
from maintenance.planning import LABEL_MAINTENANCE, DeviceRef, plan_rules, rule_object
from maintenance.taints import EFFECTS, FieldError, selector_errors, taint_errors

log = logging.getLogger(__name__)
EVICTING_EFFECTS = ("NoSchedule", "NoExecute")


class MaintenanceError(Exception):
    """Bad input or a refused write. `errors` name the field and the rule; `status` is the HTTP status."""

    def __init__(
        self, errors: list[FieldError], *, status: int = 400, cluster_error: dict[str, Any] | None = None
    ):
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in errors))
        self.errors = errors
        self.status = status
        self.cluster_error = cluster_error or {}

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"errors": [e.as_dict() for e in self.errors]}
        if self.cluster_error:
            body["cluster"] = self.cluster_error
        return body


@dataclass(frozen=True)
class Draft:
    title: str
    reason: str
    ticket: str
    key: str
    value: str
    effect: str
    devices: list[DeviceRef]
    filters: dict[str, Any]
    every_device: bool = False


def _user_name(user: Any) -> str:
    return str(getattr(user, "username", "") or "anonymous")


def _pool_devices(devices: list[DeviceRef]) -> dict[tuple[str, str], list[str]]:
    from inventory.models import Device

    pools = {(d.driver, d.pool) for d in devices}
    members: dict[tuple[str, str], list[str]] = {p: [] for p in pools}
    if not pools:
        return members
    drivers = {p[0] for p in pools}
    names = {p[1] for p in pools}
    for driver, pool, name in Device.objects.filter(driver__in=drivers, pool__in=names).values_list(
        "driver", "pool", "name"
    ):
        if (driver, pool) in members:
            members[(driver, pool)].append(name)
    return members


def maintenance_create(*, user: Any, draft: Draft) -> Maintenance:
    errors: list[FieldError] = []
    if not draft.title.strip():
        errors.append(FieldError("title", "Required value: say what this maintenance is"))
    if not draft.reason.strip():
        errors.append(FieldError("reason", "Required value: say why the devices go out of service"))
    errors.extend(taint_errors(key=draft.key, value=draft.value, effect=draft.effect))
    if draft.every_device:
        errors.extend(selector_errors({}, confirm_all_devices=True))
    elif not draft.devices:
        errors.append(FieldError("devices", "Required value: select at least one device"))
    if errors:
        raise MaintenanceError(errors)

    maintenance = Maintenance(
        title=draft.title.strip()[:200],
        reason=draft.reason.strip()[:500],
        ticket=draft.ticket.strip()[:100],
        created_by=user if getattr(user, "pk", None) else None,
        taint_key=draft.key,
        taint_value=draft.value,
        target_effect=draft.effect,
        every_device=draft.every_device,
        filters=draft.filters,
        devices=[
            {"driver": d.driver, "pool": d.pool, "device": d.device} for d in sorted(set(draft.devices))
        ],
    )
    if draft.every_device:
        maintenance.rules = [{"name": f"dradash-{maintenance.id}-every-device", "selector": {}}]
    else:
        plans = plan_rules(
            maintenance_id=maintenance.id, selected=draft.devices, pool_devices=_pool_devices(draft.devices)
        )
        maintenance.rules = [{"name": p.name, "selector": p.selector} for p in plans]
    maintenance.save()
    return maintenance


def maintenance_rule_objects(*, maintenance: Maintenance, effect: str | None = None) -> list[dict[str, Any]]:
    from maintenance.planning import RulePlan

    objects = []
    for rule in maintenance.rules:
        plan = RulePlan(name=rule["name"], selector=dict(rule["selector"]), devices=())
        objects.append(
            rule_object(
                plan,
                maintenance_id=maintenance.id,
                author=maintenance.created_by.username if maintenance.created_by else "unknown",
                reason=maintenance.reason,
                ticket=maintenance.ticket,
                key=maintenance.taint_key,
                value=maintenance.taint_value,
                effect=effect or maintenance.target_effect,
            )
        )
    return objects


def maintenance_yaml(*, maintenance: Maintenance, effect: str | None = None) -> str:
    return yaml.safe_dump_all(
        maintenance_rule_objects(maintenance=maintenance, effect=effect), sort_keys=False
    )


def maintenance_kubectl_command(*, maintenance: Maintenance, effect: str | None = None) -> str:
    return (
        "kubectl apply --server-side --field-manager=dradash -f - <<'EOF'\n"
        + maintenance_yaml(maintenance=maintenance, effect=effect)
        + "EOF\n"
    )


def _audit(
    *,
    maintenance: Maintenance,
    user: Any,
    action: str,
    rule: dict[str, Any] | None = None,
    rule_name: str = "",
    effect: str = "",
    message: str = "",
    outcome: dict[str, Any] | None = None,
) -> AuditEntry:
    meta = (rule or {}).get("metadata", {})
    return AuditEntry.objects.create(
        user=user if getattr(user, "pk", None) else None,
        actor=_user_name(user),
        source=AuditEntry.SOURCE_DRADASH,
        action=action,
        rule_name=rule_name or meta.get("name", ""),
        rule_uid=meta.get("uid", ""),
        rule_generation=meta.get("generation"),
        maintenance=maintenance,
        preview_run_id=maintenance.preview_run_id,
        effect=effect,
        yaml=yaml.safe_dump(rule, sort_keys=False) if rule else "",
        outcome=outcome or {},
        message=message,
    )


def _plan_writes(maintenance: Maintenance, effect: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(desired object, what the cluster has now or None) per rule. Refuses to touch a rule of the
    same name that another maintenance (or someone else) owns."""
    writes = []
    for desired in maintenance_rule_objects(maintenance=maintenance, effect=effect):
        current = cluster.get_rule(desired["metadata"]["name"])
        if current is not None:
            owner = current.get("metadata", {}).get("labels", {}).get(LABEL_MAINTENANCE)
            if owner != maintenance.id:
                raise MaintenanceError(
                    [
                        FieldError(
                            "rules",
                            f"DeviceTaintRule {desired['metadata']['name']!r} already exists and does not belong "
                            f"to maintenance {maintenance.id}; refusing to overwrite it",
                        )
                    ],
                    status=409,
                )
        writes.append((desired, current))
    return writes


def _write(desired: dict[str, Any], current: dict[str, Any] | None, *, dry_run: bool) -> dict[str, Any]:
    if current is None:
        return cluster.create_rule(desired, dry_run=dry_run)
    patch = {"metadata": {"labels": desired["metadata"]["labels"], "annotations": desired["metadata"]["annotations"]},
             "spec": {"taint": {**desired["spec"]["taint"], "value": desired["spec"]["taint"].get("value")}}}  # fmt: skip
    return cluster.patch_rule(desired["metadata"]["name"], patch, dry_run=dry_run)


def _undo_write(desired: dict[str, Any], current: dict[str, Any] | None) -> None:
    name = desired["metadata"]["name"]
    if current is None:
        cluster.delete_rule(name)
    else:
        cluster.patch_rule(name, {"spec": {"taint": current["spec"]["taint"]}}, dry_run=False)


def maintenance_apply(*, maintenance: Maintenance, user: Any, effect: str, confirmed: bool) -> Maintenance:
    """Write all rules with `effect`: dry run everything, then write; on a failure roll back."""
    errors = [
        e for e in taint_errors(key=maintenance.taint_key, value=maintenance.taint_value, effect=effect)
    ]
    if errors:
        raise MaintenanceError(errors)
    if effect in EVICTING_EFFECTS and not confirmed:
        raise MaintenanceError(
            [
                FieldError(
                    "confirm",
                    f"Applying {effect} takes devices out of service: confirm the blast radius first",
                )
            ]
        )
    if maintenance.state == Maintenance.UNDONE:
        raise MaintenanceError(
            [FieldError("state", "This maintenance was undone; start a new one")], status=409
        )

    try:
        writes = _plan_writes(maintenance, effect)
        for desired, current in writes:
            _write(desired, current, dry_run=True)
    except ClusterWriteError as error:
        _record_failure(maintenance, user, effect, "server-side dry run refused the rules", error)
        raise MaintenanceError(
            _cluster_field_errors(error), status=_http_status(error), cluster_error=error.as_dict()
        ) from error

    # Freeze who will be affected before the first write: the eviction controller starts at once, and
    # the mirror may report pods gone before this function returns.
    enforce_time = timezone.now()
    affected = None
    if effect == "NoExecute":
        from maintenance.progress import affected_pods

        affected = affected_pods(maintenance=maintenance, taint_time=enforce_time)

    done: list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]] = []
    try:
        for desired, current in writes:
            done.append((desired, current, _write(desired, current, dry_run=False)))
    except ClusterWriteError as error:
        rollback_problems = []
        for desired, current, _ in reversed(done):
            try:
                _undo_write(desired, current)
            except ClusterWriteError as undo_error:
                rollback_problems.append(f"{desired['metadata']['name']}: {undo_error}")
        message = "writing the rules failed; rolled back the ones already written"
        if rollback_problems:
            message += " (could not roll back: " + "; ".join(rollback_problems) + ")"
        _record_failure(maintenance, user, effect, message, error)
        raise MaintenanceError(
            _cluster_field_errors(error), status=_http_status(error), cluster_error=error.as_dict()
        ) from error

    with transaction.atomic():
        for _desired, current, stored in done:
            _audit(
                maintenance=maintenance, user=user, action="create" if current is None else "update",
                rule=stored, effect=effect,
                message=f"{'created' if current is None else 'changed'} with effect {effect}",
            )  # fmt: skip
        maintenance.state = Maintenance.APPLIED
        maintenance.applied_effect = effect
        maintenance.last_error = {}
        if affected is not None:
            maintenance.enforced_at = enforce_time
            maintenance.affected = affected
        maintenance.save()
        broadcast(f"maintenance-{maintenance.id}", {"type": "maintenance.changed", "id": maintenance.id})
    return maintenance


def maintenance_undo(*, maintenance: Maintenance, user: Any, mode: str) -> Maintenance:
    """Undo the whole maintenance: delete its rules (`mode="delete"`) or set their effect to None."""
    if mode not in ("delete", "none"):
        raise MaintenanceError([FieldError("mode", 'Unsupported value: use "delete" or "none"')])
    if maintenance.state != Maintenance.APPLIED:
        raise MaintenanceError(
            [FieldError("state", "Nothing to undo: the rules are not applied")], status=409
        )
    if mode == "none":
        return maintenance_apply(maintenance=maintenance, user=user, effect="None", confirmed=True)
    problems: list[str] = []
    for rule in maintenance.rules:
        try:
            cluster.delete_rule(rule["name"])
            _audit(
                maintenance=maintenance,
                user=user,
                action="delete",
                rule_name=rule["name"],
                message="deleted (undo)",
            )
        except ClusterWriteError as error:
            problems.append(f"{rule['name']}: {error}")
    if problems:
        maintenance.last_error = {"message": "some rules could not be deleted", "details": problems}
        maintenance.save(update_fields=["last_error", "updated_at"])
        raise MaintenanceError([FieldError("rules", "; ".join(problems))], status=502)
    maintenance.state = Maintenance.UNDONE
    maintenance.applied_effect = ""
    maintenance.last_error = {}
    maintenance.save()
    broadcast(f"maintenance-{maintenance.id}", {"type": "maintenance.changed", "id": maintenance.id})
    return maintenance


def _http_status(error: ClusterWriteError) -> int:
    if error.status in (409, 422, 403, 404):
        return error.status
    return 502


def _cluster_field_errors(error: ClusterWriteError) -> list[FieldError]:
    if error.causes:
        return [FieldError(str(c.get("field", "rule")), str(c.get("message", ""))) for c in error.causes]
    return [FieldError("cluster", f"{error.reason}: {error.message}")]


def _record_failure(
    maintenance: Maintenance, user: Any, effect: str, message: str, error: ClusterWriteError
) -> None:
    maintenance.last_error = {"message": message, "cluster": error.as_dict()}
    maintenance.save(update_fields=["last_error", "updated_at"])
    _audit(maintenance=maintenance, user=user, action="failed", effect=effect, message=f"{message}: {error}",
           outcome={"error": error.as_dict()})  # fmt: skip


def maintenance_preview_start(*, maintenance: Maintenance, user: Any) -> Any:
    """Start the taint-impact what-if for this maintenance's selection (runs in a worker)."""
    from allocation.services import whatif_run_create
    from allocation.whatif.base import WhatIfInputError

    selectors_ = [r["selector"] for r in maintenance.rules]
    taint = {"key": maintenance.taint_key, "value": maintenance.taint_value, "effect": "NoExecute"}
    subject = {"selector": selectors_[0]} if len(selectors_) == 1 else {"selectors": selectors_}
    try:
        run = whatif_run_create(kind="taint_impact", input={**subject, "taint": taint}, user=user)
    except WhatIfInputError as error:
        raise MaintenanceError([FieldError(error.field, error.message)]) from error
    maintenance.preview_run_id = str(run.pk)
    maintenance.save(update_fields=["preview_run_id", "updated_at"])
    return run


__all__ = [
    "EFFECTS",
    "Draft",
    "MaintenanceError",
    "maintenance_apply",
    "maintenance_create",
    "maintenance_kubectl_command",
    "maintenance_preview_start",
    "maintenance_rule_objects",
    "maintenance_undo",
    "maintenance_yaml",
]
