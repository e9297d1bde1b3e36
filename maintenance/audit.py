"""The audit log's writers: what dradash did (services call `record`), and what the mirror saw happen
(the `mirror_batch_committed` hook calls `observe_batch`): rules changed outside dradash (attributed
to the field manager the API server recorded in managedFields), pods an applied maintenance evicted,
the PodDisruptionBudgets that left broken, the replacements and where they ran, and device taints
that drivers publish in their ResourceSlices (driver-reported faults).

Everything is derived from the mirror's rows after the batch committed; each observation is recorded
once (entries are keyed by the object's uid), so a re-list or a repeated batch adds nothing.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import yaml
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from dradash.realtime import broadcast
from inventory.models import Device, KubeObject
from maintenance.models import AuditEntry, Maintenance, SeenDeviceTaint
from maintenance.planning import LABEL_MAINTENANCE

log = logging.getLogger(__name__)

AUDIT_GROUP = "maintenance-audit"
# Evictions and replacements keep coming for a while after an undo: watch that long.
WATCH_AFTER_UNDO = timedelta(minutes=30)
# More device-taint changes than this of one driver, key and effect in one batch make one entry.
DRIVER_TAINT_ENTRIES = 10


def user_name(user: Any) -> str:
    return str(getattr(user, "username", "") or "anonymous")


def record(
    *,
    action: str,
    maintenance: Maintenance | None = None,
    user: Any = None,
    actor: str = "",
    source: str = AuditEntry.SOURCE_DRADASH,
    rule: dict[str, Any] | None = None,
    rule_name: str = "",
    rule_uid: str = "",
    effect: str = "",
    subject: str = "",
    object_uid: str = "",
    message: str = "",
    outcome: dict[str, Any] | None = None,
    preview_run_id: str | None = None,
) -> AuditEntry:
    meta = (rule or {}).get("metadata") or {}
    return AuditEntry.objects.create(
        user=user if getattr(user, "pk", None) else None,
        actor=(actor or user_name(user))[:253],
        source=source,
        action=action,
        rule_name=(rule_name or meta.get("name", ""))[:253],
        rule_uid=rule_uid or meta.get("uid", ""),
        rule_generation=meta.get("generation"),
        maintenance=maintenance,
        preview_run_id=preview_run_id
        if preview_run_id is not None
        else (maintenance.preview_run_id if maintenance else ""),
        effect=effect[:16],
        yaml=yaml.safe_dump(rule, sort_keys=False) if rule else "",
        outcome=outcome or {},
        message=message,
        subject=subject[:600],
        object_uid=object_uid[:64],
    )


def announce(maintenance_ids: Iterable[str] = ()) -> None:
    """Tell the live audit page (and the maintenances' pages) once the entries are committed."""
    broadcast(AUDIT_GROUP, {"type": "audit.changed"})
    for maintenance_id in sorted(set(maintenance_ids)):
        broadcast(f"maintenance-{maintenance_id}", {"type": "maintenance.changed", "id": maintenance_id})


def latest_version() -> str:
    """The live audit page's version: the newest entry's id."""
    return str(AuditEntry.objects.order_by("-id").values_list("id", flat=True).first() or 0)


# --------------------------------------------------------------------------- the mirror's hook


def observe_batch(changes: list[dict[str, Any]], *, baseline: bool = False) -> None:
    """`baseline`: the mirror's first list of a kind it never held (see `observe_rules`)."""
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for change in changes:
        by_kind[str(change.get("kind"))].append(change)
    if not any(by_kind.get(kind) for kind in ("devicetaintrules", "pods", "resourceslices")):
        return  # a batch of claims, nodes, classes…: nothing to audit, no transaction to open
    touched: set[str] = set()
    wrote = False
    with transaction.atomic():
        if by_kind.get("devicetaintrules"):
            wrote |= observe_rules(by_kind["devicetaintrules"], touched, baseline=baseline) > 0
        if by_kind.get("pods"):
            wrote |= observe_pods(by_kind["pods"], touched) > 0
        if by_kind.get("resourceslices"):
            wrote |= observe_driver_taints(by_kind["resourceslices"]) > 0
        if wrote:
            announce(touched)


def spec_manager(raw: dict[str, Any]) -> str:
    """Who last wrote the rule's spec: the newest managedFields entry (Update or Apply, not a status
    subresource) whose fields include spec. Empty when the server recorded none."""
    best: tuple[str, int] | None = None
    manager = ""
    for index, entry in enumerate((raw.get("metadata") or {}).get("managedFields") or []):
        if not isinstance(entry, dict) or entry.get("operation") not in ("Update", "Apply"):
            continue
        if entry.get("subresource") or "f:spec" not in (entry.get("fieldsV1") or {}):
            continue
        key = (str(entry.get("time") or ""), index)
        if best is None or key >= best:
            best, manager = key, str(entry.get("manager") or "")
    return manager


def _ours_in_flight(maintenance: Maintenance | None, *, deleted: bool, effect: str) -> bool:
    """dradash is writing this maintenance's rules right now and this change is what it writes (its
    own audit entry follows as soon as the write returns)."""
    intent = maintenance.write_intent if maintenance is not None else {}
    if not intent:
        return False
    if intent.get("op") == "rollback":  # removing what a failed enforce left: deletes and set-backs alike
        return True
    if deleted:
        return intent.get("op") == "undo"
    return intent.get("op") == "apply" and intent.get("effect") == effect


def observe_rules(changes: list[dict[str, Any]], touched: set[str], *, baseline: bool = False) -> int:
    """Rule changes dradash did not make (kubectl, GitOps, another tool), as the mirror saw them.

    `baseline` (the mirror's first list of the rules, into a database that never held any): what the
    cluster had before dradash looked is not a change it saw, so nothing is recorded — a thousand rules
    would otherwise be a thousand "created outside dradash" entries, each rendering its YAML. Later changes
    of those rules still are: an update is told from a creation by the generation the API server counts
    (a rule whose spec changed since it was created has generation > 1), and a delete is recorded whenever
    the mirror held the rule. A re-list after that reports only what differs from the rows held (rules
    created, changed or deleted while the mirror was away), and those are recorded like watch events."""
    if baseline:
        return 0
    written = 0
    modified = [c["uid"] for c in changes if c.get("type") != "DELETED" and c.get("uid")]
    rows: dict[str, Any] = {}
    for batch in _chunks(modified):
        rows.update(
            (r.uid, r)
            for r in KubeObject.objects.filter(kind="devicetaintrules", uid__in=batch).only(
                "uid", "name", "generation", "raw"
            )
        )
    known: set[tuple[str, int | None]] = set()
    for batch in _chunks([str(c.get("uid") or "") for c in changes]):
        known.update(AuditEntry.objects.filter(rule_uid__in=batch).values_list("rule_uid", "rule_generation"))
    known_uids = {uid for uid, _ in known}
    labelled = {
        str(((row.raw.get("metadata") or {}).get("labels") or {}).get(LABEL_MAINTENANCE, ""))
        for row in rows.values()
    }
    maintenances = {m.pk: m for m in Maintenance.objects.filter(pk__in=sorted(labelled - {""}))}
    # The rules held now under the names of the deleted ones: a delete seen by a re-list is often of an
    # object whose name a new one has taken (deleted and created again while dradash was not watching).
    gone_names = sorted({str(c.get("name") or "") for c in changes if c.get("type") == "DELETED"} - {""})
    named_now: dict[str, str] = {}
    for batch in _chunks(gone_names):
        named_now.update(
            KubeObject.objects.filter(kind="devicetaintrules", name__in=batch).values_list("name", "uid")
        )
    for change in changes:
        uid = str(change.get("uid") or "")
        if change.get("type") == "DELETED":
            if AuditEntry.objects.filter(rule_uid=uid, action__in=("delete", "seen-delete")).exists():
                continue
            owner = (
                AuditEntry.objects.filter(rule_uid=uid).exclude(maintenance=None).select_related("maintenance")
                .order_by("-id").first()
            )  # fmt: skip
            maintenance = owner.maintenance if owner is not None else None
            if _ours_in_flight(maintenance, deleted=True, effect=""):
                continue
            if uid not in known_uids and maintenance is None and not change.get("name"):
                continue  # the mirror never held it (created and deleted before it looked, or in one batch)
            name = str(change.get("name") or "")
            message = f"deleted outside dradash (uid {uid[:8]}; the API server does not record who deletes)"
            if named_now.get(name, uid) != uid:
                message += (
                    f"; the rule named so now is another object, created anew (uid {named_now[name][:8]})"
                )
            record(action="seen-delete", source=AuditEntry.SOURCE_CLUSTER, actor="unknown",
                   maintenance=maintenance, rule_name=name, rule_uid=uid, preview_run_id="",
                   message=message)  # fmt: skip
            if maintenance is not None:
                touched.add(maintenance.id)
            written += 1
            continue
        row = rows.get(uid)
        if row is None or (uid, row.generation) in known:
            continue
        labels = (row.raw.get("metadata") or {}).get("labels") or {}
        maintenance = maintenances.get(str(labels.get(LABEL_MAINTENANCE, "")))
        effect = str(((row.raw.get("spec") or {}).get("taint") or {}).get("effect", ""))
        if _ours_in_flight(maintenance, deleted=False, effect=effect):
            continue
        manager = spec_manager(row.raw)
        where = f" (a rule of maintenance {maintenance.id})" if maintenance is not None else ""
        updated = uid in known_uids or (row.generation or 1) > 1
        record(
            action="seen-update" if updated else "seen-create",
            source=AuditEntry.SOURCE_CLUSTER, actor=manager or "unknown", maintenance=maintenance,
            rule=row.raw, rule_name=row.name, rule_uid=uid, effect=effect, preview_run_id="",
            message=f"{'changed' if updated else 'created'} outside dradash by "
                    f"{manager or 'an unknown field manager'}{where}",
        )  # fmt: skip
        if maintenance is not None:
            touched.add(maintenance.id)
        written += 1
    return written


def _chunks(values: list[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _watched_maintenances() -> list[Maintenance]:
    """Maintenances whose NoExecute evictions may still be under way."""
    recent = timezone.now() - WATCH_AFTER_UNDO
    return list(
        Maintenance.objects.filter(enforced_at__isnull=False)
        .filter(
            Q(state=Maintenance.APPLIED)
            | Q(state=Maintenance.UNDONE, updated_at__gte=recent)
            | ~Q(write_intent={})  # being enforced right now: evictions may start before it is saved
        )
        .only("id", "affected", "budgets", "owner_pods", "enforced_at", "preview_run_id", "state")
    )


def _owner_uid(metadata: dict[str, Any]) -> str:
    for ref in metadata.get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid", ""))
    return ""


def _unschedulable(conditions: list[dict[str, Any]] | None) -> bool:
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable"
               for c in conditions or [])  # fmt: skip


def observe_pods(changes: list[dict[str, Any]], touched: set[str]) -> int:
    """Evictions, broken budgets and replacements of the maintenances whose taint evicts."""
    watched = _watched_maintenances()
    if not watched:
        return 0
    affected: dict[str, tuple[Maintenance, dict[str, Any]]] = {}
    owners: dict[str, Maintenance] = {}
    existing = {m.id: set(m.owner_pods or []) for m in watched}
    for m in watched:
        for pod in m.affected or []:
            affected[pod["uid"]] = (m, pod)
            if pod.get("owner_uid"):
                owners[pod["owner_uid"]] = m
    written = 0
    gone = [c for c in changes if c.get("type") == "DELETED" and c.get("uid") in affected]
    recorded = set(
        AuditEntry.objects.filter(action="evicted", object_uid__in=[c["uid"] for c in gone]).values_list(
            "object_uid", flat=True
        )
    )
    for change in gone:
        m, pod = affected[change["uid"]]
        if change["uid"] in recorded or pod.get("evict_at") is None:
            continue  # recorded already, or a pod that tolerates the taint and left on its own
        record(action="evicted", maintenance=m, source=AuditEntry.SOURCE_CLUSTER, actor="device-taint-eviction",
               subject=f"{pod['namespace']}/{pod['name']}", object_uid=pod["uid"],
               message=f"pod {pod['namespace']}/{pod['name']} evicted (it held {', '.join(pod.get('claims') or [])})",
               outcome={"owner": pod.get("owner", ""), "evict_at": pod.get("evict_at")})  # fmt: skip
        touched.add(m.id)
        written += 1
    for m in {affected[c["uid"]][0].id: affected[c["uid"]][0] for c in gone}.values():
        written += _record_broken_budgets(m)

    candidates = [c["uid"] for c in changes if c.get("type") != "DELETED" and c.get("uid") not in affected]
    if not owners or not candidates:
        return written
    seen: dict[str, set[str]] = defaultdict(set)
    for uid, outcome in AuditEntry.objects.filter(
        action="replacement", object_uid__in=candidates
    ).values_list("object_uid", "outcome"):
        seen[uid].add(str((outcome or {}).get("state", "")))
    rows = KubeObject.objects.filter(kind="pods", uid__in=candidates).values_list(
        "uid", "namespace", "name", "creation_timestamp", "raw__metadata", "raw__spec__nodeName", "raw__status__conditions"
    )  # fmt: skip
    for uid, namespace, name, created, metadata, node, conditions in rows:
        m = owners.get(_owner_uid(metadata or {}))
        if m is None or m.enforced_at is None or uid in existing[m.id]:
            continue
        if created < m.enforced_at.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ"):
            continue  # a sibling that ran before the taint, not a replacement
        state = "running" if node else "unschedulable" if _unschedulable(conditions) else ""
        if not state or state in seen[uid]:
            continue
        where = f"on node {node}" if node else "nowhere: no node has room (unschedulable)"
        record(action="replacement", maintenance=m, source=AuditEntry.SOURCE_CLUSTER, actor="scheduler",
               subject=f"{namespace}/{name}", object_uid=uid, message=f"replacement pod {namespace}/{name} runs {where}",
               outcome={"state": state, "node": node or ""})  # fmt: skip
        seen[uid].add(state)
        touched.add(m.id)
        written += 1
    return written


def _record_broken_budgets(maintenance: Maintenance) -> int:
    """A PodDisruptionBudget this maintenance evicted more of its pods than it allowed when enforced."""
    if not maintenance.budgets:
        return 0
    evicted = set(
        AuditEntry.objects.filter(maintenance=maintenance, action="evicted").values_list(
            "object_uid", flat=True
        )
    )
    broken = set(
        AuditEntry.objects.filter(maintenance=maintenance, action="pdb-broken").values_list(
            "object_uid", flat=True
        )
    )
    written = 0
    for budget in maintenance.budgets:
        count = len(evicted & set(budget["pods"]))
        if count <= budget["allowed"] or budget["uid"] in broken:
            continue
        name = f"{budget['namespace']}/{budget['name']}"
        record(action="pdb-broken", maintenance=maintenance, source=AuditEntry.SOURCE_CLUSTER,
               actor="device-taint-eviction", subject=name, object_uid=budget["uid"],
               message=f"PodDisruptionBudget {name} broken: it allowed {budget['allowed']} disruption(s) and this "
                       f"maintenance evicted {count} of its pods (device-taint eviction ignores budgets)",
               outcome={"allowed": budget["allowed"], "evicted": count})  # fmt: skip
        written += 1
    return written


def _pool_of(index_key: str) -> tuple[str, str]:
    driver, _, pool = index_key.partition("/")  # a driver name has no "/", a pool name may
    return driver, pool


def observe_driver_taints(changes: list[dict[str, Any]]) -> int:
    """Device taints in ResourceSlices appearing or disappearing, compared with what was last seen."""
    uids = [str(c.get("uid") or "") for c in changes]
    pools: set[tuple[str, str]] = set()
    for key in KubeObject.objects.filter(kind="resourceslices", uid__in=uids).values_list(
        "index_key", flat=True
    ):
        pools.add(_pool_of(key))
    pools.update(SeenDeviceTaint.objects.filter(slice_uid__in=uids).values_list("driver", "pool").distinct())
    if not pools:
        return 0
    drivers, names = {p[0] for p in pools}, {p[1] for p in pools}
    now: dict[tuple[str, str, str, str, str], tuple[str, str, str]] = {}
    # Only devices whose slice taints them (most have none: not read, not decoded); no ordering needed.
    with_taints = (
        Device.objects.filter(driver__in=drivers, pool__in=names).exclude(slice_taints=[]).order_by()
    )
    for driver, pool, device, node, slice_uid, taints in with_taints.values_list(
        "driver", "pool", "name", "node_name", "slice_uid", "slice_taints"
    ):
        if (driver, pool) not in pools:
            continue
        for taint in taints or []:
            key = (driver, pool, device, str(taint.get("key", "")), str(taint.get("effect", "")))
            now[key] = (str(taint.get("value", "") or ""), node, slice_uid)
    before = {
        (s.driver, s.pool, s.device, s.key, s.effect): s
        for s in SeenDeviceTaint.objects.filter(driver__in=drivers, pool__in=names)
        if (s.driver, s.pool) in pools
    }
    added = [k for k in now if k not in before or before[k].value != now[k][0]]
    removed = [k for k in before if k not in now]
    if not added and not removed:
        for key, (_value, _node, slice_uid) in now.items():
            if before[key].slice_uid != slice_uid:
                SeenDeviceTaint.objects.filter(pk=before[key].pk).update(slice_uid=slice_uid)
        return 0

    written = 0
    groups: dict[tuple[str, str, str, str], list[tuple[str, str, str, str, str]]] = defaultdict(list)
    for key in added:
        groups[("driver-taint", key[0], key[3], key[4])].append(key)
    for key in removed:
        groups[("driver-untaint", key[0], key[3], key[4])].append(key)
    for (action, driver, taint_key, effect), keys in sorted(groups.items()):
        verb = "tainted" if action == "driver-taint" else "removed the taint"
        if len(keys) <= DRIVER_TAINT_ENTRIES:
            for k in sorted(keys):
                node = now[k][1] if k in now else before[k].node
                value = now[k][0] if k in now else before[k].value
                described = f"{taint_key}{'=' + value if value else ''}:{effect}"
                record(action=action, source=AuditEntry.SOURCE_CLUSTER, actor=driver, effect=effect,
                       subject=f"{k[0]}/{k[1]}/{k[2]}",
                       message=f"driver {verb} {described} on device {k[0]}/{k[1]}/{k[2]}"
                               f"{' (node ' + node + ')' if node else ''}",
                       outcome={"key": taint_key, "effect": effect, "node": node})  # fmt: skip
                written += 1
        else:
            listed = sorted(f"{k[0]}/{k[1]}/{k[2]}" for k in keys)
            record(action=action, source=AuditEntry.SOURCE_CLUSTER, actor=driver, effect=effect,
                   subject=f"{len(keys)} devices of {driver}",
                   message=f"driver {verb} {taint_key}:{effect} on {len(keys)} devices ({', '.join(listed[:5])}, …)",
                   outcome={"key": taint_key, "effect": effect, "devices": listed[:1000]})  # fmt: skip
            written += 1
    SeenDeviceTaint.objects.filter(pk__in=[before[k].pk for k in removed]).delete()
    SeenDeviceTaint.objects.filter(pk__in=[before[k].pk for k in added if k in before]).delete()
    SeenDeviceTaint.objects.bulk_create(
        [
            SeenDeviceTaint(
                driver=k[0],
                pool=k[1],
                device=k[2],
                key=k[3],
                effect=k[4],
                value=now[k][0],
                node=now[k][1],
                slice_uid=now[k][2],
            )
            for k in added
        ]  # fmt: skip
    )
    return written
