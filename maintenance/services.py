"""Writes of the maintenance room: draft → preview → apply with an effect → undo.

Safe by construction:
- a draft selects only devices the operator chose and the inventory has, within the configured limits;
- NoSchedule and NoExecute need a succeeded preview that still describes the cluster, the explicit
  confirmation, and — when pods are evicted — the typed phrase that restates what is at stake;
- every write names the version of the maintenance it was decided on; a stale one is refused (409,
  with what is true now), and so is an action the state no longer allows (maintenance.states);
- every write to the cluster is dry-run first for all rules; a failure in the real writes rolls back
  what was already written, so the cluster never holds half a maintenance. The draft stays.
Each step enters the audit log.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import yaml
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from inventory.models import Device, KubeObject
from maintenance import audit, cluster, states
from maintenance.cluster import ClusterWriteError
from maintenance.confirmation import blast_radius, challenge, typed_matches
from maintenance.errors import (
    HEADLINE_CONFIRM,
    HEADLINE_CONFLICT,
    HEADLINE_NEEDS_PREVIEW,
    HEADLINE_STALE_PREVIEW,
    MaintenanceError,
)
from maintenance.models import AuditEntry, Maintenance, MaintenancePreview
from maintenance.planning import LABEL_MAINTENANCE, DeviceRef, RulePlan, plan_rules, rule_object
from maintenance.preview import PreviewStatus, basis_fingerprint, draft_hash, preview_basis, preview_status
from maintenance.progress import (
    affected_budgets,
    affected_pods,
    drain_evictions,
    maintenance_progress,
    owner_pods,
    undo_consequences,
)
from maintenance.scope import cluster_device_count, selected_devices, summarize
from maintenance.taints import EFFECTS, FieldError, selector_errors, taint_errors
from maintenance.validation import EVERY_DEVICE_PHRASE, text_errors, unstorable_errors

log = logging.getLogger(__name__)


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


EVICTING_EFFECTS = ("NoSchedule", "NoExecute")
UNKNOWN_DEVICES_LISTED = 20


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
    # The number of devices the operator was shown for "all N matching": refused if it changed since.
    expected_count: int | None = None


def _pool_devices(devices: list[DeviceRef]) -> dict[tuple[str, str], dict[str, str]]:
    """{(driver, pool): {device: node}} for every pool the selection touches, as the inventory has it."""
    pools = {(d.driver, d.pool) for d in devices}
    members: dict[tuple[str, str], dict[str, str]] = {p: {} for p in pools}
    if not pools:
        return members
    rows = Device.objects.filter(driver__in={p[0] for p in pools}, pool__in={p[1] for p in pools})
    for driver, pool, name, node in rows.values_list("driver", "pool", "name", "node_name"):
        if (driver, pool) in members:
            members[(driver, pool)][name] = node
    return members


def _limit_error(field: str, count: int, limit: int, setting: str, verb: str, noun: str) -> FieldError:
    return FieldError(
        field,
        f"this maintenance would {verb} {count} {noun}; at most {limit} are allowed per maintenance ({setting}). "
        "Narrow the selection or split it into several maintenances.",
    )


def maintenance_create(*, user: Any, draft: Draft) -> Maintenance:
    """Store a draft (no cluster write). Refuses, naming the field, anything not explicitly chosen."""
    errors: list[FieldError] = []
    if not draft.title.strip():
        errors.append(FieldError("title", "Required value: say what this maintenance is"))
    if not draft.reason.strip():
        errors.append(FieldError("reason", "Required value: say why the devices go out of service"))
    for name in ("title", "reason", "ticket"):
        limit = Maintenance._meta.get_field(name).max_length
        errors.extend(text_errors(name, getattr(draft, name).strip(), limit or 0))
    errors.extend(unstorable_errors(draft.filters, "filters"))
    unreadable = [
        FieldError(f"devices[{i}]", found[0].message)
        for i, d in enumerate(draft.devices)
        if (found := unstorable_errors([d.driver, d.pool, d.device]))
    ]
    errors.extend(unreadable[:UNKNOWN_DEVICES_LISTED])
    errors.extend(taint_errors(key=draft.key, value=draft.value, effect=draft.effect))
    max_devices = settings.DRADASH_MAINTENANCE_MAX_DEVICES
    chosen = sorted(set(draft.devices))
    pool_devices: dict[tuple[str, str], dict[str, str]] = {}
    if draft.every_device:
        errors.extend(selector_errors({}, confirm_all_devices=True))
        total = cluster_device_count()
        if total > max_devices:
            errors.append(_limit_error("every_device", total, max_devices, "DRADASH_MAINTENANCE_MAX_DEVICES",
                                       "select", "devices"))  # fmt: skip
    elif not chosen:
        errors.append(
            FieldError("devices", "Required value: nothing is selected; select at least one device")
        )
    elif len(chosen) > max_devices:
        errors.append(_limit_error("devices", len(chosen), max_devices, "DRADASH_MAINTENANCE_MAX_DEVICES",
                                   "select", "devices"))  # fmt: skip
    elif not unreadable:  # a NUL is no device name, and no database looks one up
        pool_devices = _pool_devices(chosen)
        unknown = [
            (i, d)
            for i, d in enumerate(draft.devices)
            if d.device not in pool_devices.get((d.driver, d.pool), {})
        ]
        for index, ref in unknown[:UNKNOWN_DEVICES_LISTED]:
            errors.append(
                FieldError(
                    f"devices[{index}]",
                    f"Not found: no device {ref.driver}/{ref.pool}/{ref.device} in the inventory "
                    "(check the driver, pool and device names)",
                )
            )
        if len(unknown) > UNKNOWN_DEVICES_LISTED:
            errors.append(FieldError("devices", f"{len(unknown)} devices are not in the inventory in all"))
    if draft.expected_count is not None and not draft.every_device and draft.expected_count != len(chosen):
        errors.append(
            FieldError(
                "expected_count",
                f"the selection now has {len(chosen)} devices, not the {draft.expected_count} you were shown: "
                "look at the selection again",
            )
        )
    if errors:
        raise MaintenanceError(errors)

    maintenance = Maintenance(
        title=draft.title.strip(),
        reason=draft.reason.strip(),
        ticket=draft.ticket.strip(),
        created_by=user if getattr(user, "pk", None) else None,
        taint_key=draft.key,
        taint_value=draft.value,
        target_effect=draft.effect,
        every_device=draft.every_device,
        filters=draft.filters,
        devices=[{"driver": d.driver, "pool": d.pool, "device": d.device} for d in chosen],
    )
    if draft.every_device:
        maintenance.rules = [{"name": f"dradash-{maintenance.id}-every-device", "selector": {}}]
        spanned = selected_devices(maintenance.rules)
    else:
        plans = plan_rules(
            maintenance_id=maintenance.id,
            selected=chosen,
            pool_devices={pool: list(names) for pool, names in pool_devices.items()},
        )
        max_rules = settings.DRADASH_MAINTENANCE_MAX_RULES
        if len(plans) > max_rules:
            raise MaintenanceError(
                [
                    _limit_error(
                        "rules", len(plans), max_rules, "DRADASH_MAINTENANCE_MAX_RULES", "write", "rules"
                    )
                ]
            )
        maintenance.rules = [{"name": p.name, "selector": p.selector} for p in plans]
        spanned = [(d.driver, d.pool, d.device, pool_devices[(d.driver, d.pool)][d.device]) for d in chosen]
    maintenance.scope = summarize(spanned)
    maintenance.device_count = maintenance.scope["device_count"]
    maintenance.rule_count = len(maintenance.rules)
    maintenance.save()
    scope = maintenance.scope
    audit.record(
        action="draft", maintenance=maintenance, user=user, effect=draft.effect,
        message=f"draft: {'every device in the cluster' if draft.every_device else _n(scope['device_count'], 'device')}"
                f" on {_n(scope['node_count'], 'node')} ({', '.join(scope['drivers'])}), {_n(len(maintenance.rules), 'rule')}, "
                f"taint {draft.key}{'=' + draft.value if draft.value else ''}",
        outcome={"filters": draft.filters, "scope": scope, "every_device": draft.every_device},
    )  # fmt: skip
    audit.announce([maintenance.id])
    return maintenance


def maintenance_rule_objects(
    *, maintenance: Maintenance, effect: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    objects = []
    for rule in maintenance.rules[:limit]:
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


def maintenance_yaml(*, maintenance: Maintenance, effect: str | None = None, limit: int | None = None) -> str:
    return yaml.safe_dump_all(
        maintenance_rule_objects(maintenance=maintenance, effect=effect, limit=limit), sort_keys=False
    )


def maintenance_kubectl_command(
    *, maintenance: Maintenance, effect: str | None = None, limit: int | None = None
) -> str:
    return (
        "kubectl apply --server-side --field-manager=dradash -f - <<'EOF'\n"
        + maintenance_yaml(maintenance=maintenance, effect=effect, limit=limit)
        + "EOF\n"
    )


# --------------------------------------------------------------------------- state and version checks


def _describe(maintenance: Maintenance) -> str:
    if maintenance.state == Maintenance.APPLIED:
        return f"applied with effect {maintenance.applied_effect}"
    return {Maintenance.DRAFT: "a draft", Maintenance.UNDONE: "undone"}.get(
        maintenance.state, maintenance.state
    )


def _last_change(maintenance: Maintenance) -> str:
    entry = (
        AuditEntry.objects.filter(maintenance=maintenance, source=AuditEntry.SOURCE_DRADASH)
        .exclude(action="refused")
        .order_by("-id")
        .first()
    )
    if entry is None:
        return ""
    return (
        f" (last change: {entry.get_action_display()} by {entry.actor} at {entry.at:%Y-%m-%d %H:%M:%S} UTC)"
    )


def _conflict(maintenance: Maintenance, field: str, message: str, **extra: Any) -> MaintenanceError:
    return MaintenanceError(
        [FieldError(field, message)], status=409, current=states.current(maintenance),
        headline=extra.pop("headline", HEADLINE_CONFLICT), **extra,
    )  # fmt: skip


def _check(maintenance: Maintenance, action: str, expected_version: int | None) -> None:
    maintenance.refresh_from_db()
    if expected_version is not None and expected_version != maintenance.version:
        raise _conflict(
            maintenance,
            "version",
            f"this page showed version {expected_version}; the maintenance is now at version "
            f"{maintenance.version} and is {_describe(maintenance)}{_last_change(maintenance)}",
        )
    if not states.allows(maintenance.state, action, drain_state=states.drain_state_of(maintenance)):
        why = states.REFUSAL[maintenance.state]
        if maintenance.state == Maintenance.DRAFT and maintenance.leftover_rules:
            why = (
                f"it is a draft; only the {_n(len(maintenance.leftover_rules), 'rule')} a failed enforce left "
                "are in the cluster (remove them from its page)"
            )
        raise _conflict(
            maintenance,
            "state",
            f"cannot {action}: this maintenance is {_describe(maintenance)} — {why}{_last_change(maintenance)}",
        )


def _claim(maintenance: Maintenance, **fields: Any) -> None:
    """Take the next version (and set `fields`) only if nobody else did meanwhile: of two writes
    decided on the same version, the second is refused."""
    claimed = Maintenance.objects.filter(pk=maintenance.pk, version=maintenance.version).update(
        version=F("version") + 1, updated_at=timezone.now(), **fields
    )
    if not claimed:
        maintenance.refresh_from_db()
        raise _conflict(
            maintenance, "version", f"another change to this maintenance came first; it is now {_describe(maintenance)}"
            f"{_last_change(maintenance)}",
        )  # fmt: skip
    maintenance.refresh_from_db()


def _refused(maintenance: Maintenance, user: Any, what: str, error: MaintenanceError, **outcome: Any) -> None:
    audit.record(
        action="refused", maintenance=maintenance, user=user, effect=str(outcome.get("effect", ""))[:16],
        message=f"{what} refused ({error.status}): {error}",
        outcome={"status": error.status, "errors": [e.as_dict() for e in error.errors], **outcome},
    )  # fmt: skip
    audit.announce([maintenance.id])


# --------------------------------------------------------------------------- preview


def maintenance_preview_start(
    *, maintenance: Maintenance, user: Any, expected_version: int | None = None
) -> Any:
    """Start the taint-impact what-if for this maintenance (runs in a worker) and record its basis."""
    from allocation.services import WhatIfInputError, WhatIfLimitError, whatif_run_create

    _check(maintenance, states.PREVIEW, expected_version)
    selectors_ = [r["selector"] for r in maintenance.rules]
    # The preview asks what NoExecute would do, whatever effect is enforced later: who would be evicted.
    taint = {"key": maintenance.taint_key, "value": maintenance.taint_value, "effect": "NoExecute"}
    subject = {"selector": selectors_[0]} if len(selectors_) == 1 else {"selectors": selectors_}
    basis = preview_basis(maintenance)
    # The version is claimed first and the run and its preview are created in the same transaction: a
    # request that loses the race to another preview is refused before it creates anything, and one
    # refused by the what-if limits gives its claim back. The run is queued only once this commits.
    try:
        with transaction.atomic():
            _claim(maintenance)
            run = whatif_run_create(kind="taint_impact", input={**subject, "taint": taint}, user=user)
            MaintenancePreview.objects.create(
                maintenance=maintenance, run_id=str(run.pk), fingerprint=basis_fingerprint(basis), basis=basis,
                requested_by=user if getattr(user, "pk", None) else None,
            )  # fmt: skip
            Maintenance.objects.filter(pk=maintenance.pk).update(preview_run_id=str(run.pk))
    except WhatIfInputError as error:
        maintenance.refresh_from_db()  # the claim was rolled back
        status = 429 if isinstance(error, WhatIfLimitError) else 400
        raise MaintenanceError([FieldError(error.field, error.message)], status=status) from error
    maintenance.preview_run_id = str(run.pk)
    audit.record(
        action="preview", maintenance=maintenance, user=user, preview_run_id=str(run.pk),
        message=f"preview started over {_n(basis['devices']['count'], 'device')} "
                f"({len(basis['allocated'])} allocated, {_n(len(basis['claims']), 'claim')})",
        outcome={"fingerprint": basis_fingerprint(basis), "devices": basis["devices"]["count"],
                 "allocated": len(basis["allocated"]), "draft": draft_hash(maintenance)},
    )  # fmt: skip
    audit.announce([maintenance.id])
    return run


def _result_summary(result: dict[str, Any]) -> dict[str, Any]:
    summary = dict(result.get("summary") or {})
    summary["budgets"] = [f"{b.get('namespace')}/{b.get('name')}" for b in result.get("budgets") or []][:50]
    summary["pod_nodes"] = sorted({str(p.get("node")) for p in result.get("pods") or [] if p.get("evicted")})[
        :50
    ]
    return summary


def maintenance_preview_observe(*, maintenance: Maintenance, check_stale: bool = True) -> PreviewStatus:
    """The latest preview's status. The first caller to see it finished enters its result in the audit
    log (exactly once: a conditional update decides who records)."""
    status = preview_status(maintenance, check_stale=check_stale)
    preview = status.preview
    if preview is None or preview.result_recorded or status.state in ("none", "pending", "running"):
        return status
    if not MaintenancePreview.objects.filter(pk=preview.pk, result_recorded=False).update(
        result_recorded=True
    ):
        return status  # another reader recorded it
    preview.result_recorded = True
    if status.state == "succeeded":
        summary = _result_summary(status.result)
        message = (
            f"preview succeeded: {_n(summary.get('devices', 0), 'device')}, {_n(summary.get('claims', 0), 'claim')}, "
            f"{_n(summary.get('evicted', 0), 'pod')} evicted with NoExecute on {_n(len(summary['pod_nodes']), 'node')}, "
            f"{_n(summary.get('budgets_broken', 0), 'PodDisruptionBudget')} broken, "
            f"{summary.get('pending_unschedulable', 0)} pending pods unschedulable"
        )
    else:
        summary = {"error": str(getattr(status.run, "error", "") or "")[:2000]}
        message = f"preview {status.state}" + (f": {summary['error']}" if summary["error"] else "")
    audit.record(
        action="preview-result", maintenance=maintenance, user=preview.requested_by,
        preview_run_id=preview.run_id, message=message, outcome={"state": status.state, **summary},
    )  # fmt: skip
    audit.announce([maintenance.id])
    return status


def _whole_cluster(maintenance: Maintenance, devices: int) -> bool:
    if maintenance.every_device:
        return True
    total = cluster_device_count()
    return total > 0 and devices >= total


def maintenance_blast(*, maintenance: Maintenance, status: PreviewStatus, effect: str) -> Any:
    """The blast radius of enforcing `effect`, from a succeeded preview (None without one)."""
    if status.state != "succeeded":
        return None
    result = status.result
    devices = int((result.get("summary") or {}).get("devices", maintenance.device_count))
    return blast_radius(
        effect=effect, preview_run=status.run_id, result=result, scope=maintenance.scope,
        whole_cluster=_whole_cluster(maintenance, devices),
    )  # fmt: skip


def _require_preview(maintenance: Maintenance, effect: str, preview_id: str) -> PreviewStatus:
    status = maintenance_preview_observe(maintenance=maintenance)

    def refuse(message: str, headline: str, **extra: Any) -> MaintenanceError:
        return _conflict(maintenance, "preview", message, headline=headline, **extra)

    if status.preview is None:
        raise refuse(f"{effect} takes devices out of service: run the preview first and review its blast radius",
                     HEADLINE_NEEDS_PREVIEW)  # fmt: skip
    if preview_id and preview_id != status.run_id:
        raise refuse(f"you confirmed preview {preview_id}, but the latest preview is {status.run_id}: review it",
                     HEADLINE_STALE_PREVIEW)  # fmt: skip
    if status.state in ("pending", "running"):
        raise refuse("the preview is still running: wait for its result", HEADLINE_NEEDS_PREVIEW)
    if status.state != "succeeded":
        error = str(getattr(status.run, "error", "") or "")
        raise refuse(
            f"the preview {status.state}{': ' + error if error else ''}; run it again", HEADLINE_NEEDS_PREVIEW
        )
    if status.stale:
        raise refuse("the preview is stale: " + "; ".join(status.changes), HEADLINE_STALE_PREVIEW,
                     changes=status.changes)  # fmt: skip
    return status


# --------------------------------------------------------------------------- apply and undo


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
                    headline="A rule of this name belongs to someone else; nothing was applied.",
                )
        writes.append((desired, current))
    return writes


def _write(
    desired: dict[str, Any], current: dict[str, Any] | None, *, dry_run: bool, user: Any = None
) -> dict[str, Any]:
    """Create or patch one rule, as `user` when impersonation is on (`maintenance.cluster`)."""
    if current is None:
        return cluster.create_rule(desired, dry_run=dry_run, as_user=user)
    patch = {"metadata": {"labels": desired["metadata"]["labels"], "annotations": desired["metadata"]["annotations"]},
             "spec": {"taint": {**desired["spec"]["taint"], "value": desired["spec"]["taint"].get("value")}}}  # fmt: skip
    return cluster.patch_rule(desired["metadata"]["name"], patch, dry_run=dry_run, as_user=user)


def _undo_write(desired: dict[str, Any], current: dict[str, Any] | None, user: Any = None) -> None:
    name = desired["metadata"]["name"]
    if current is None:
        cluster.delete_rule(name, as_user=user)
    else:
        cluster.patch_rule(name, {"spec": {"taint": current["spec"]["taint"]}}, dry_run=False, as_user=user)


def _refused_headline(
    maintenance: Maintenance, error: ClusterWriteError | None = None, left: list[str] | None = None
) -> str:
    if left:
        # Not "nothing was applied": these are in the cluster with the new effect; writing them again
        # (the same enforce) makes the cluster and this maintenance agree.
        return (
            f"Writing the rules failed and {_n(len(left), 'rule')} could not be rolled back "
            f"({', '.join(left[:3])}{' …' if len(left) > 3 else ''}): they are listed on this maintenance's page; "
            "dradash removes them once the cluster answers, or enforce again."
        )
    if error is not None and error.denied:
        # The cluster's RBAC refused the operator (impersonation): say who and what, and that nothing stuck.
        return f"{error.denied}; nothing was applied."
    if error is not None and error.unreachable:  # it refused nothing: it did not answer
        if maintenance.state == Maintenance.DRAFT:
            return "Cannot reach the Kubernetes API; nothing was applied. Your draft is kept: try again."
        return (
            f"Cannot reach the Kubernetes API; the rules keep effect {maintenance.applied_effect}: try again."
        )
    if maintenance.state == Maintenance.DRAFT:
        return "The cluster refused the change; nothing was applied. Your draft is kept."
    return f"The cluster refused the change; the rules keep effect {maintenance.applied_effect}."


def maintenance_apply(
    *,
    maintenance: Maintenance,
    user: Any,
    effect: str,
    confirmed: bool,
    typed: str = "",
    preview_id: str = "",
    expected_version: int | None = None,
) -> Maintenance:
    """Write all rules with `effect`: check state, preview and confirmation; dry run everything; write;
    on a failure roll back."""
    try:
        _check(maintenance, states.APPLY, expected_version)
        errors = taint_errors(key=maintenance.taint_key, value=maintenance.taint_value, effect=effect)
        if errors:
            raise MaintenanceError(errors)
        if maintenance.state == Maintenance.APPLIED and effect == maintenance.applied_effect:
            raise _conflict(
                maintenance, "effect", f"the rules already have effect {effect}; nothing to change"
            )
        blast = None
        phrase = ""
        if effect in EVICTING_EFFECTS:
            status = _require_preview(maintenance, effect, preview_id)
            blast = maintenance_blast(maintenance=maintenance, status=status, effect=effect)
            wanted = challenge(blast)
            phrase = wanted.phrase
            if confirmed is not True:
                raise MaintenanceError(
                    [FieldError("confirm", f"Applying {effect} takes {blast.devices} devices out of service: "
                                "confirm the blast radius (the JSON boolean true)")],
                    headline=HEADLINE_CONFIRM,
                )  # fmt: skip
            if phrase and not typed_matches(typed, phrase):
                raise MaintenanceError(
                    [FieldError("typed", f'{wanted.why}: type "{phrase}" to confirm'
                                + (f" (you typed {typed[:80]!r})" if typed else ""))],
                    headline=HEADLINE_CONFIRM,
                )  # fmt: skip
    except MaintenanceError as error:
        if error.status != 400 or error.headline == HEADLINE_CONFIRM:
            _refused(maintenance, user, f"apply {effect}", error, effect=effect, typed=typed[:200])
        raise

    # Freeze who will be affected before the first write: the eviction controller starts at once, and
    # the mirror (and its audit hook) may see pods go before this function returns.
    before = {
        "affected": maintenance.affected,
        "budgets": maintenance.budgets,
        "enforced_at": maintenance.enforced_at,
    }
    frozen: dict[str, Any] = {}
    if effect == "NoExecute":
        enforce_time = timezone.now()
        pods = affected_pods(maintenance=maintenance, taint_time=enforce_time)
        frozen = {"affected": pods, "budgets": affected_budgets(affected=pods),
                  "owner_pods": owner_pods(affected=pods), "enforced_at": enforce_time}  # fmt: skip
    _claim(maintenance, write_intent={"op": "apply", "effect": effect}, **frozen)
    if blast is not None:
        audit.record(
            action="confirm", maintenance=maintenance, user=user, effect=effect, preview_run_id=blast.preview_run,
            message=f"confirmed {effect} on {_n(blast.devices, 'device')} ({_n(blast.node_count, 'node')}): "
                    f"{_n(blast.pods, 'pod')} evicted, {_n(len(blast.budgets), 'PodDisruptionBudget')} broken"
                    + (f'; typed "{typed.strip()}"' if phrase else "; no typing required"),
            outcome={"typed": typed.strip()[:200], "phrase": phrase, "blast": blast.as_dict()},
        )  # fmt: skip

    try:
        writes = _plan_writes(maintenance, effect)
        for desired, current in writes:
            _write(desired, current, dry_run=True, user=user)
    except (ClusterWriteError, MaintenanceError) as error:
        _release(maintenance, before)
        if isinstance(error, MaintenanceError):
            _refused(maintenance, user, f"apply {effect}", error, effect=effect)
            raise
        _record_failure(maintenance, user, effect, "server-side dry run refused the rules", error)
        raise MaintenanceError(
            _cluster_field_errors(error), status=_http_status(error), cluster_error=error.as_dict(),
            headline=_refused_headline(maintenance, error),
        ) from error  # fmt: skip

    done: list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]] = []
    try:
        for desired, current in writes:
            stored = _write(desired, current, dry_run=False, user=user)
            done.append((desired, current, stored))
            audit.record(
                action="create" if current is None else "update", maintenance=maintenance, user=user,
                rule=stored, effect=effect,
                message=f"{'created' if current is None else 'changed'} with effect {effect}",
            )  # fmt: skip
    except ClusterWriteError as error:
        rollback_problems = []
        left = []
        leftovers: list[dict[str, Any]] = []
        failed_at = timezone.now().isoformat()
        for desired, current, stored in reversed(done):
            try:
                _undo_write(desired, current, user)
                audit.record(action="delete" if current is None else "update", maintenance=maintenance,
                             user=user, rule_name=desired["metadata"]["name"],
                             message="rolled back after a later write failed")  # fmt: skip
            except ClusterWriteError as undo_error:
                rollback_problems.append(f"{desired['metadata']['name']}: {undo_error}")
                left.append(desired["metadata"]["name"])
                leftovers.append(
                    {"name": desired["metadata"]["name"], "uid": (stored.get("metadata") or {}).get("uid", ""),
                     "effect": effect, "previous": None if current is None else current["spec"]["taint"],
                     "at": failed_at, "by": audit.user_name(user), "user_id": getattr(user, "pk", None),
                     "error": str(undo_error)}
                )  # fmt: skip
        message = "writing the rules failed; rolled back the ones already written"
        if rollback_problems:
            message = "writing the rules failed; could not roll back: " + "; ".join(rollback_problems)
        # A rule an earlier failure left keeps its first record: what it is set back to is what the
        # cluster had before dradash touched it, not what that failure left.
        known = {r["name"] for r in maintenance.leftover_rules}
        before["leftover_rules"] = [
            *maintenance.leftover_rules,
            *(r for r in leftovers if r["name"] not in known),
        ]
        _release(maintenance, before)
        _record_failure(maintenance, user, effect, message, error)
        raise MaintenanceError(
            _cluster_field_errors(error), status=_http_status(error), cluster_error=error.as_dict(),
            headline=_refused_headline(maintenance, error, left),
        ) from error  # fmt: skip

    # Every rule was just written with `effect`: those a failed enforce left now match this maintenance.
    _settle(maintenance, states.APPLY, applied_effect=effect)
    audit.announce([maintenance.id])
    return maintenance


def _settle(maintenance: Maintenance, action: str, *, applied_effect: str) -> None:
    """An apply or undo went through: the next state, the effect the rules now have, and no error, write
    in flight or rule left over by a failed enforce (every rule now matches this maintenance)."""
    maintenance.state = states.next_state(maintenance.state, action)
    maintenance.applied_effect = applied_effect
    maintenance.last_error = {}
    maintenance.write_intent = {}
    maintenance.leftover_rules = []
    maintenance.save(
        update_fields=[
            "state",
            "applied_effect",
            "last_error",
            "write_intent",
            "leftover_rules",
            "updated_at",
        ]
    )


def _release(maintenance: Maintenance, before: dict[str, Any]) -> None:
    """A write that did not happen: clear the intent and restore what was frozen for it."""
    Maintenance.objects.filter(pk=maintenance.pk).update(write_intent={}, **before)
    maintenance.refresh_from_db()


def _rule_uids(maintenance: Maintenance, names: list[str]) -> dict[str, str]:
    """The uid of each rule: as the mirror has it, else as dradash's own write was answered."""
    written = dict(
        AuditEntry.objects.filter(maintenance=maintenance, action__in=("create", "update"))
        .exclude(rule_uid="")
        .order_by("id")
        .values_list("rule_name", "rule_uid")
    )
    mirrored = dict(
        KubeObject.objects.filter(kind="devicetaintrules", namespace="", name__in=names).values_list(
            "name", "uid"
        )
    )
    return {**written, **mirrored}


def maintenance_undo(
    *, maintenance: Maintenance, user: Any, mode: str, expected_version: int | None = None
) -> dict[str, Any]:
    """Undo the whole maintenance: delete its rules (`mode="delete"`) or set their effect to None.
    Returns what undo does not undo (evicted pods stay evicted) and the replacements that exist."""
    try:
        if mode not in ("delete", "none"):
            raise MaintenanceError([FieldError("mode", 'Unsupported value: use "delete" or "none"')])
        _check(maintenance, states.UNDO, expected_version)
        if mode == "none" and maintenance.applied_effect == "None":
            raise _conflict(maintenance, "mode", "the rules already have effect None; delete them to finish")
    except MaintenanceError as error:
        if error.status != 400:
            _refused(maintenance, user, f"undo ({mode})", error)
        raise
    consequences = undo_consequences(
        progress=maintenance_progress(maintenance=maintenance, now=timezone.now(), pods_limit=None),
        drain=drain_evictions(maintenance=maintenance),
    )
    if mode == "none":
        maintenance_apply(maintenance=maintenance, user=user, effect="None", confirmed=True,
                          expected_version=maintenance.version)  # fmt: skip
        audit.record(action="undo", maintenance=maintenance, user=user, effect="None",
                     message="effect set to None: the devices serve again. " + consequences["text"],
                     outcome=consequences)  # fmt: skip
        audit.announce([maintenance.id])
        return consequences

    _claim(maintenance, write_intent={"op": "undo"})
    names = [rule["name"] for rule in maintenance.rules]
    uids = _rule_uids(maintenance, names)
    problems: list[str] = []
    unreachable = True  # every failed delete found no API server: 503, as an enforce
    for name in names:
        try:
            cluster.delete_rule(name, as_user=user)
            audit.record(action="delete", maintenance=maintenance, user=user, rule_name=name,
                         rule_uid=uids.get(name, ""), message="deleted (undo)")  # fmt: skip
        except ClusterWriteError as error:
            problems.append(f"{name}: {error}")
            unreachable = unreachable and error.unreachable
    if problems:
        Maintenance.objects.filter(pk=maintenance.pk).update(
            write_intent={}, last_error={"message": "some rules could not be deleted", "details": problems}
        )
        maintenance.refresh_from_db()
        audit.record(
            action="failed", maintenance=maintenance, user=user, message="undo: " + "; ".join(problems)
        )
        audit.announce([maintenance.id])
        raise MaintenanceError(
            [FieldError("rules", "; ".join(problems))], status=503 if unreachable else 502,
            headline="Some rules could not be deleted; the others are gone. Try undo again.",
        )  # fmt: skip
    _settle(maintenance, states.UNDO, applied_effect="")  # every rule of this maintenance is deleted
    audit.record(action="undo", maintenance=maintenance, user=user,
                 message=f"undone: {_n(len(names), 'rule')} deleted. " + consequences["text"],
                 outcome=consequences)  # fmt: skip
    audit.announce([maintenance.id])
    return consequences


def _http_status(error: ClusterWriteError) -> int:
    """The cluster's refusals as they are; 503 when it did not answer (as the database, the task broker
    and pool status writes: dradash cannot reach what it needs now); 502 for its other error answers."""
    if error.unreachable:
        return 503
    if error.status in (409, 422, 403, 404):
        return error.status
    return 502


def _cluster_field_errors(error: ClusterWriteError) -> list[FieldError]:
    if error.denied:
        return [FieldError("cluster", error.denied)]
    if error.unreachable:  # "cannot reach the Kubernetes API: <the client's error>"
        return [FieldError("cluster", error.message)]
    if error.causes:
        return [FieldError(str(c.get("field", "rule")), str(c.get("message", ""))) for c in error.causes]
    return [FieldError("cluster", f"{error.reason}: {error.message}")]


def _record_failure(
    maintenance: Maintenance, user: Any, effect: str, message: str, error: ClusterWriteError
) -> None:
    maintenance.last_error = {"message": message, "cluster": error.as_dict()}
    maintenance.save(update_fields=["last_error", "updated_at"])
    audit.record(action="failed", maintenance=maintenance, user=user, effect=effect, message=f"{message}: {error}",
                 outcome={"error": error.as_dict()})  # fmt: skip
    audit.announce([maintenance.id])


__all__ = [
    "EFFECTS",
    "EVERY_DEVICE_PHRASE",
    "Draft",
    "MaintenanceError",
    "maintenance_apply",
    "maintenance_blast",
    "maintenance_create",
    "maintenance_kubectl_command",
    "maintenance_preview_observe",
    "maintenance_preview_start",
    "maintenance_rule_objects",
    "maintenance_undo",
    "maintenance_yaml",
]
