"""What-if runs: one row per question asked, moved through its states only by allocation.services."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models

from allocation.whatif.base import kind_label


class RunState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    TIMED_OUT = "timed_out", "Timed out"


TERMINAL_STATES = frozenset({RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED, RunState.TIMED_OUT})


class WhatIfRun(models.Model):
    """A what-if question and, once a worker has answered it, its answer.

    pending → running → succeeded | failed | cancelled | timed_out; pending → cancelled.
    The id doubles as the Celery task id (chosen on the web side, so a page can subscribe before the
    worker starts) and as the shareable URL.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # One of the registered what-if kinds (allocation.whatif.base); not a choices list, so that a new
    # kind needs no migration.
    kind = models.CharField(max_length=40)
    state = models.CharField(max_length=20, choices=RunState.choices, default=RunState.PENDING, db_index=True)
    input = models.JSONField()
    phase = models.CharField(max_length=200, blank=True, default="")
    percent = models.PositiveSmallIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    snapshot_versions = models.JSONField(
        default=dict, blank=True, help_text="resourceVersion per mirrored kind of the snapshot the run used"
    )
    cancel_requested = models.BooleanField(default=False)
    time_limit_seconds = models.PositiveIntegerField()
    max_search_steps = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="search steps one allocation attempt may take (empty: no bound)"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="whatif_runs"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["state", "heartbeat_at"], name="whatif_state_heartbeat")]

    def __str__(self) -> str:
        return f"{self.kind_label} run {self.id} ({self.state})"

    @property
    def kind_label(self) -> str:
        return kind_label(self.kind)

    @property
    def is_finished(self) -> bool:
        return self.state in TERMINAL_STATES

    def public_state(self) -> dict[str, Any]:
        """What a page or websocket needs to show progress (no result: that can be large)."""
        return {
            "id": str(self.id),
            "kind": self.kind,
            "kind_label": self.kind_label,
            "state": self.state,
            "phase": self.phase,
            "percent": self.percent,
            "error": self.error,
            "cancel_requested": self.cancel_requested,
            "finished": self.is_finished,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }
