"""Pool availability snapshots are made as the logged-in user under impersonation (like DeviceTaintRule
writes): the chart's service account may only impersonate for them; Kubernetes RBAC lets alice create
ResourcePoolStatusRequests and not bob."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings

from inventory.kube import connect
from inventory.mirror.runner import Mirror
from migration.pool_status import PoolStatusWriteError, pool_status_create, pool_status_delete
from tests.maintenance.conftest import user_in
from tests.maintenance.test_impersonation import cluster as cluster  # noqa: F401  (the fixture)
from tests.maintenance.test_impersonation import kubectl

pytestmark = [pytest.mark.helm, pytest.mark.kubectl, pytest.mark.django_db]

ALICE_SNAPSHOTS = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "pool-snapshots"},
     "rules": [{"apiGroups": ["resource.k8s.io"], "resources": ["resourcepoolstatusrequests"],
                "verbs": ["get", "list", "create", "delete"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "alice-snapshots"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pool-snapshots"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]},
]  # fmt: skip


def test_alice_creates_and_deletes_a_snapshot_as_herself_and_bob_is_denied(
    cluster: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    kubectl(cluster.kubeconfig_path, tmp_path, "apply", "-f", "-", stdin=yaml.safe_dump_all(ALICE_SNAPSHOTS))
    alice, bob = user_in("operator", "alice"), user_in("operator", "bob")

    created = pool_status_create(driver="gpu.example.com", user=alice)
    name = created["metadata"]["name"]
    stored = cluster.store.get("resourcepoolstatusrequests", name)
    assert stored["spec"] == {"driver": "gpu.example.com"}

    with pytest.raises(PoolStatusWriteError) as denied:
        pool_status_create(driver="gpu.example.com", user=bob)
    assert denied.value.status == 403
    assert denied.value.message == "Kubernetes denied: bob cannot create resourcepoolstatusrequests"
    Mirror(connect(settings.DRADASH_KUBECONFIG)).sync_once()  # delete names a request the inventory knows
    with pytest.raises(PoolStatusWriteError) as denied:
        pool_status_delete(name=name, user=bob)
    assert denied.value.message == "Kubernetes denied: bob cannot delete resourcepoolstatusrequests"

    pool_status_delete(name=name, user=alice)
    assert [r["metadata"]["name"] for r in cluster.store.list("resourcepoolstatusrequests")] == []
