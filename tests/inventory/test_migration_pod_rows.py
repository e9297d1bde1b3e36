"""Migration 0022 gives the pods a database already mirrors their Pod rows: the mirror rewrites a pod only when
its resourceVersion moves, so without them the Pods list would miss every pod that has not changed since."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("inventory", "0021_counters_pause")
AFTER = ("inventory", "0022_pod")


def test_the_pods_already_mirrored_get_their_rows() -> None:
    call_command("migrate", *BEFORE, verbosity=0)
    try:
        old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
        kube_object = old.get_model("inventory", "KubeObject")
        raw = {
            "metadata": {"name": "trainer-0", "namespace": "ml", "uid": "u-1", "creationTimestamp": "2026-11-01T10:00:00Z"},
            "spec": {"nodeName": "node-1", "containers": [{"name": "main"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": "team-gpu"}]},
            "status": {"phase": "Running"},
        }  # fmt: skip
        kube_object.objects.create(kind="pods", uid="u-1", name="trainer-0", namespace="ml", raw=raw)
        kube_object.objects.create(
            kind="nodes", uid="n-1", name="node-1", raw={"metadata": {"name": "node-1"}}
        )

        call_command("migrate", *AFTER, verbosity=0)
        new = MigrationExecutor(connection).loader.project_state(AFTER).apps
        rows = list(
            new.get_model("inventory", "Pod").objects.values(
                "uid", "namespace", "name", "node_name", "status", "claims"
            )
        )
        assert rows == [
            {"uid": "u-1", "namespace": "ml", "name": "trainer-0", "node_name": "node-1", "status": "Running",
             "claims": [{"podClaim": "gpu", "name": "team-gpu", "source": "claim", "template": ""}]},
        ]  # fmt: skip
    finally:
        call_command("migrate", verbosity=0)


def test_the_pods_already_mirrored_get_why_they_wait() -> None:
    """Migration 0023: the rows 0022 made (or the mirror wrote) before Pod had a waiting reason get one."""
    before, after = ("inventory", "0022_pod"), ("inventory", "0023_pod_waiting")
    call_command("migrate", *before, verbosity=0)
    try:
        old = MigrationExecutor(connection).loader.project_state(before).apps
        kube_object = old.get_model("inventory", "KubeObject")
        message = "0/3 nodes are available: 3 cannot allocate all claims."
        pending = {
            "metadata": {"name": "too-big", "namespace": "research", "uid": "u-1"},
            "spec": {"containers": [{"name": "main"}]},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]},
        }  # fmt: skip
        running = {
            "metadata": {"name": "web", "namespace": "default", "uid": "u-2"},
            "spec": {"nodeName": "node-1", "containers": [{"name": "main"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }
        for uid, raw in (("u-1", pending), ("u-2", running)):
            meta = raw["metadata"]
            kube_object.objects.create(
                kind="pods", uid=uid, name=meta["name"], namespace=meta["namespace"], raw=raw
            )
            # the row the mirror wrote then, without a waiting reason
            old.get_model("inventory", "Pod").objects.create(
                uid=uid, name=meta["name"], namespace=meta["namespace"], phase=raw["status"]["phase"]
            )

        call_command("migrate", *after, verbosity=0)
        new = MigrationExecutor(connection).loader.project_state(after).apps
        rows = new.get_model("inventory", "Pod").objects.order_by("uid")
        assert list(rows.values_list("name", "waiting_reason", "waiting_message")) == [
            ("too-big", "Unschedulable", message),
            ("web", "", ""),
        ]
    finally:
        call_command("migrate", verbosity=0)
