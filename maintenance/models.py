"""A maintenance groups the DeviceTaintRules written for one operator intent; a preview records what
its blast radius was computed over; the audit log records the whole story (draft, preview,
confirmation, rule writes, evictions, broken budgets, replacements, undo, and what the mirror saw)."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import ProtectedError
from django.db.models.signals import pre_delete
from django.dispatch import receiver


def new_maintenance_id() -> str:
    return "m" + secrets.token_hex(4)


class Maintenance(models.Model):
    # The lifecycle and its allowed actions are one table in maintenance.states.
    DRAFT = "draft"
    APPLIED = "applied"  # rules exist in the cluster (effect in `applied_effect`)
    UNDONE = "undone"
    DRAINING = "draining"  # rules applied with NoSchedule; the drain evicts the affected pods (Drain)
    STATES = [(DRAFT, "draft"), (APPLIED, "applied"), (DRAINING, "draining"), (UNDONE, "undone")]

    id = models.CharField(primary_key=True, max_length=16, default=new_maintenance_id, editable=False)
    title = models.CharField(max_length=200)
    reason = models.CharField(max_length=500)
    ticket = models.CharField(max_length=100, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    state = models.CharField(max_length=16, choices=STATES, default=DRAFT)

    taint_key = models.CharField(max_length=317)
    taint_value = models.CharField(max_length=63, blank=True, default="")
    target_effect = models.CharField(max_length=16)  # what the operator wants in the end
    applied_effect = models.CharField(max_length=16, blank=True, default="")  # what the cluster has now
    every_device = models.BooleanField(default=False)  # an empty selector, explicitly confirmed

    filters = models.JSONField(default=dict, blank=True)  # the inventory filters the selection came from
    devices = models.JSONField(default=list, blank=True)  # [{driver, pool, device, node}]
    rules = models.JSONField(default=list, blank=True)  # [{name, selector}]
    preview_run_id = models.CharField(max_length=64, blank=True, default="")
    # Pods the enforced taint affects, frozen when NoExecute was applied: [{uid, namespace, name, owner_uid, evict_at}]
    affected = models.JSONField(default=list, blank=True)
    # Uids of the pods the affected pods' owners had at that moment: a pod of those owners not among
    # them is a replacement (creation timestamps have one-second resolution, so they cannot tell).
    owner_pods = models.JSONField(default=list, blank=True)
    # PodDisruptionBudgets selecting those pods, with the disruptions they allowed at that moment:
    # [{uid, namespace, name, allowed, pods: [uid]}] (the audit log reports the ones evictions broke).
    budgets = models.JSONField(default=list, blank=True)
    enforced_at = models.DateTimeField(null=True, blank=True)
    last_error = models.JSONField(default=dict, blank=True)
    # Bumped by every write to this maintenance: a form or API call made from an older page names the
    # version it saw, and is refused (409, with the current state) when it no longer matches.
    version = models.PositiveIntegerField(default=1)
    device_count = models.PositiveIntegerField(default=0)
    rule_count = models.PositiveIntegerField(default=0)
    # What the selection spans, for summaries and the confirmation: {node_count, nodes (first 50),
    # drivers, pool_count}.
    scope = models.JSONField(default=dict, blank=True)
    # Set (committed) before dradash writes the rules and cleared after, so the mirror's audit hook
    # can tell dradash's own writes from someone else's while they are under way: {op, effect}.
    write_intent = models.JSONField(default=dict, blank=True)
    # Rules an enforce wrote and then could not roll back (the cluster stopped answering mid-way): in the
    # cluster, not as this maintenance says, until a retry removes them (maintenance.leftovers) or an
    # enforce writes every rule again: [{name, uid, effect, previous (the taint to set back; null:
    # delete), at, by, error}].
    leftover_rules = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.id} {self.title}"

    @property
    def taint(self) -> dict[str, Any]:
        return {
            "key": self.taint_key,
            "value": self.taint_value,
            "effect": self.applied_effect or self.target_effect,
        }


class LeftoverRulesError(ProtectedError):
    """A maintenance whose failed enforce left rules in the cluster is not deleted: its row is the only
    record of them."""


@receiver(pre_delete, sender=Maintenance)
def _keep_leftover_rules(sender: Any, instance: Maintenance, **kwargs: Any) -> None:
    """Any delete (the shell, an admin, a future discard; `QuerySet.delete` too, as it sends this per row)
    is refused while rules are left: deleting the row would orphan them in the cluster."""
    left = [str(r.get("name", "")) for r in instance.leftover_rules]
    if left:
        raise LeftoverRulesError(
            f"maintenance {instance.pk} is not deleted: a failed enforce left {len(left)} rule"
            f"{'' if len(left) == 1 else 's'} in the cluster ({', '.join(left[:5])}{' …' if len(left) > 5 else ''}); "
            "remove them first (Remove them now, or enforce again and undo)",
            {instance},
        )


class MaintenancePreview(models.Model):
    """One preview (a taint-impact what-if run) and what it was computed over, so enforcing can refuse
    a preview that no longer describes the cluster (the draft, or the selected devices' allocations,
    changed since)."""

    maintenance = models.ForeignKey(Maintenance, on_delete=models.CASCADE, related_name="previews")
    run_id = models.CharField(max_length=64, db_index=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    fingerprint = models.CharField(max_length=64)
    # {draft, devices: {count, hash}, allocated: {device: [claim uid]}, claims: {uid: "ns/name@rv"}}
    basis = models.JSONField(default=dict)
    result_recorded = models.BooleanField(default=False)  # its outcome is in the audit log

    class Meta:
        ordering = ["-requested_at", "-id"]


class SeenDeviceTaint(models.Model):
    """A taint a driver publishes on a device in its ResourceSlice, as the mirror last saw it: the audit
    log records taints appearing and disappearing (driver-reported faults) by comparing with this."""

    driver = models.CharField(max_length=253)
    pool = models.CharField(max_length=253)
    device = models.CharField(max_length=63)
    key = models.CharField(max_length=317)
    effect = models.CharField(max_length=16)
    value = models.CharField(max_length=63, blank=True, default="")
    node = models.CharField(max_length=253, blank=True, default="")
    slice_uid = models.CharField(max_length=64, blank=True, default="", db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["driver", "pool", "device", "key", "effect"], name="seen_device_taint_unique"
            )
        ]
        indexes = [models.Index(fields=["driver", "pool"])]


class AuditEntry(models.Model):
    SOURCE_DRADASH = "dradash"
    SOURCE_CLUSTER = "cluster"  # seen by the mirror, written by someone else
    ACTIONS = [
        ("draft", "draft created"),
        ("preview", "preview started"),
        ("preview-result", "preview result"),
        ("confirm", "confirmed"),
        ("refused", "refused"),
        ("create", "rule created"),
        ("update", "rule changed"),
        ("delete", "rule deleted"),
        ("failed", "write failed"),
        ("undo", "undone"),
        ("evicted", "pod evicted"),
        ("eviction", "eviction requested"),
        ("drain", "drain"),
        ("pdb-broken", "budget broken"),
        ("replacement", "replacement"),
        ("seen-create", "seen created"),
        ("seen-update", "seen changed"),
        ("seen-delete", "seen deleted"),
        ("driver-taint", "driver tainted a device"),
        ("driver-untaint", "driver removed a device taint"),
        ("outcome", "outcome"),
    ]
    ACTION_NAMES = [a for a, _ in ACTIONS]

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # The dradash user; for changes made outside dradash, the field manager the API server recorded
    # in managedFields ("kubectl-client-side-apply", ...); for driver taints, the driver.
    actor = models.CharField(max_length=253, blank=True, default="", db_index=True)
    source = models.CharField(max_length=16, default=SOURCE_DRADASH, db_index=True)
    action = models.CharField(max_length=32, choices=ACTIONS, db_index=True)
    rule_name = models.CharField(max_length=253, blank=True, default="", db_index=True)
    rule_uid = models.CharField(max_length=64, blank=True, default="")
    rule_generation = models.BigIntegerField(null=True, blank=True)
    maintenance = models.ForeignKey(Maintenance, null=True, blank=True, on_delete=models.SET_NULL)
    preview_run_id = models.CharField(max_length=64, blank=True, default="")
    effect = models.CharField(max_length=16, blank=True, default="")
    yaml = models.TextField(blank=True, default="")
    outcome = models.JSONField(default=dict, blank=True)
    message = models.TextField(blank=True, default="")
    # What a non-rule entry is about: a pod, a PodDisruptionBudget or a device ("ns/name", "driver/pool/device").
    subject = models.CharField(max_length=600, blank=True, default="")
    object_uid = models.CharField(max_length=64, blank=True, default="", db_index=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["rule_uid", "rule_generation"]),
            models.Index(fields=["maintenance", "action"]),
        ]


class Drain(models.Model):
    """The staged, PDB-aware drain of one maintenance (maintenance.drain): its settings, its state and the
    lease of the driver stepping it. The driver reads only this and DrainPod, so any process can resume it."""

    RUNNING = "running"
    PAUSED = "paused"
    ABORTED = "aborted"
    COMPLETE = "complete"
    STATES = [(RUNNING, "running"), (PAUSED, "paused"), (ABORTED, "aborted"), (COMPLETE, "complete")]

    maintenance = models.OneToOneField(Maintenance, on_delete=models.CASCADE, related_name="drain")
    state = models.CharField(max_length=16, choices=STATES, default=RUNNING, db_index=True)
    concurrency = models.PositiveIntegerField(default=1)
    replacement_timeout = models.PositiveIntegerField(default=300)  # seconds to wait for a replacement
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The driver holding the drain (its token) until `lease_until`: a driver steps only a drain it holds.
    lease_owner = models.CharField(max_length=64, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)
    # Uids of the pods the affected pods' owners had when the drain started (the others are replacements).
    owner_pods = models.JSONField(default=list, blank=True)
    message = models.TextField(blank=True, default="")
    steps = models.PositiveIntegerField(default=0)


class DrainPod(models.Model):
    """One affected pod of a drain and where it is (maintenance.states.POD_STATES)."""

    drain = models.ForeignKey(Drain, on_delete=models.CASCADE, related_name="pods")
    order = models.PositiveIntegerField()  # oldest first
    uid = models.CharField(max_length=64)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    node = models.CharField(max_length=253, blank=True, default="")
    created = models.CharField(max_length=40, blank=True, default="")  # creationTimestamp
    owner_uid = models.CharField(max_length=64, blank=True, default="")
    owner = models.CharField(max_length=300, blank=True, default="")  # Kind/name
    claims = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=24, default="waiting", db_index=True)
    reason = models.TextField(blank=True, default="")
    budget = models.CharField(
        max_length=507, blank=True, default=""
    )  # ns/name of the PDB that covers it (and blocks it)
    attempts = models.PositiveIntegerField(default=0)
    next_try_at = models.DateTimeField(null=True, blank=True)
    # The driver whose eviction request is in flight (cleared with its answer): the claim that makes one
    # pod's eviction happen once even with two drivers.
    claimed_by = models.CharField(max_length=64, blank=True, default="")
    requested_at = models.DateTimeField(null=True, blank=True)
    evicted_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)  # replacement running, or given up waiting
    timed_out = models.BooleanField(default=False)
    replacement_uid = models.CharField(max_length=64, blank=True, default="")
    replacement_name = models.CharField(max_length=253, blank=True, default="")
    replacement_node = models.CharField(max_length=253, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["order"]
        constraints = [models.UniqueConstraint(fields=["drain", "uid"], name="drain_pod_unique")]
