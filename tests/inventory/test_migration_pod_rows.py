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
