"""A maintenance groups the DeviceTaintRules written for one operator intent; the audit log records
every rule change, through dradash or seen by the mirror."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models


def new_maintenance_id() -> str:
    return "m" + secrets.token_hex(4)


class Maintenance(models.Model):
    DRAFT = "draft"
    APPLIED = "applied"  # rules exist in the cluster (effect in `applied_effect`)
    UNDONE = "undone"
    STATES = [(DRAFT, "draft"), (APPLIED, "applied"), (UNDONE, "undone")]

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
    enforced_at = models.DateTimeField(null=True, blank=True)
    last_error = models.JSONField(default=dict, blank=True)

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


class AuditEntry(models.Model):
    SOURCE_DRADASH = "dradash"
    SOURCE_CLUSTER = "cluster"  # seen by the mirror, written by someone else
    ACTIONS = [
        ("create", "create"),
        ("update", "update"),
        ("delete", "delete"),
        ("failed", "failed"),
        ("seen-create", "seen created"),
        ("seen-update", "seen changed"),
        ("seen-delete", "seen deleted"),
        ("outcome", "outcome"),
    ]

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    actor = models.CharField(
        max_length=150, blank=True, default=""
    )  # user name, or "cluster" for outside writes
    source = models.CharField(max_length=16, default=SOURCE_DRADASH, db_index=True)
    action = models.CharField(max_length=16, choices=ACTIONS, db_index=True)
    rule_name = models.CharField(max_length=253, blank=True, default="", db_index=True)
    rule_uid = models.CharField(max_length=64, blank=True, default="")
    rule_generation = models.BigIntegerField(null=True, blank=True)
    maintenance = models.ForeignKey(Maintenance, null=True, blank=True, on_delete=models.SET_NULL)
    preview_run_id = models.CharField(max_length=64, blank=True, default="")
    effect = models.CharField(max_length=16, blank=True, default="")
    yaml = models.TextField(blank=True, default="")
    outcome = models.JSONField(default=dict, blank=True)
    message = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["rule_uid", "rule_generation"])]
