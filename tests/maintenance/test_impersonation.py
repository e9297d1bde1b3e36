"""Issue 11: the operator's identity on every write. dradash's service account (its token from `kubectl create
token`, its RBAC the chart's ClusterRole in impersonation mode) may only impersonate; Kubernetes RBAC lets
alice write DeviceTaintRules and not bob. Both are dradash operators: alice's apply succeeds and is
recorded as hers (managedFields name dradash), bob's reads "Kubernetes denied: bob cannot create
devicetaintrules" and leaves no rule; the pages show authoring controls to alice only."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from inventory.kube import Identity, connect
from inventory.mirror.runner import Mirror
from maintenance.models import AuditEntry, Maintenance
from maintenance.planning import DeviceRef
from maintenance.services import MaintenanceError, maintenance_apply, maintenance_undo
from simcluster.testing import SimCluster, run_simcluster
from tests.helm import NAMESPACE, RELEASE, render
from tests.kubectl import kubectl_binary
from tests.maintenance.conftest import user_in
from tests.maintenance.support import GPU, create, rules_in

pytestmark = [pytest.mark.helm, pytest.mark.kubectl, pytest.mark.django_db]
RBAC_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
ALICE_RBAC = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "taint-author"},
     "rules": [{"apiGroups": ["resource.k8s.io"], "resources": ["devicetaintrules"],
                "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "alice-authors"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "taint-author"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]},
]  # fmt: skip


def kubectl(kubeconfig: Path, tmp_path: Path, *args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [str(kubectl_binary()), "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"), *args],
        input=stdin, capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def cluster(tmp_path: Path, settings: Any) -> Iterator[SimCluster]:
    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kubeconfig") as running:
        admin = running.kubeconfig_path
        assert admin is not None
        chart = [d for d in render({"impersonation": {"enabled": True}}) if d["kind"] in RBAC_KINDS]
        kubectl(admin, tmp_path, "create", "namespace", NAMESPACE)
        kubectl(admin, tmp_path, "apply", "-n", NAMESPACE, "-f", "-", stdin=yaml.safe_dump_all(chart))
        kubectl(admin, tmp_path, "apply", "-f", "-", stdin=yaml.safe_dump_all(ALICE_RBAC))
        token = kubectl(admin, tmp_path, "create", "token", RELEASE, "-n", NAMESPACE).strip()
        dradash = running.user_kubeconfig(tmp_path / "dradash-kubeconfig", token=token, namespace=NAMESPACE)
        settings.DRADASH_KUBECONFIG = str(dradash)
        settings.DRADASH_KUBE_CONTEXT = ""
        settings.DRADASH_IMPERSONATION_ENABLED = True
        cache.clear()
        Mirror(connect(str(dradash))).sync_once()  # the mirror, too, runs on the service account's token
        yield running
        cache.clear()


def test_it_writes_as_the_operator_kubernetes_allows_and_refuses_the_one_it_denies(
    cluster: SimCluster,
) -> None:
    alice, bob = user_in("operator", "alice"), user_in("operator", "bob")

    ours = create(alice, effect="None")
    maintenance_apply(maintenance=ours, user=alice, effect="None", confirmed=True)

    stored = rules_in(cluster)
    assert set(stored) == {r["name"] for r in ours.rules}
    # the status entries are the eviction controller's (kube-controller-manager), as upstream records them
    managers = {
        e["manager"]
        for r in stored.values()
        for e in r["metadata"]["managedFields"]
        if not e.get("subresource")
    }
    assert managers == {"dradash"}  # not "python-urllib3"
    created = AuditEntry.objects.filter(maintenance=ours, action="create")
    assert created.exists() and set(created.values_list("user__username", flat=True)) == {"alice"}

    theirs = create(
        bob, effect="None", devices=[DeviceRef(GPU, "node-1", "gpu-0")], filters={"node": "node-1"}
    )
    with pytest.raises(MaintenanceError) as refused:
        maintenance_apply(maintenance=theirs, user=bob, effect="None", confirmed=True)

    assert refused.value.status == 403
    assert refused.value.headline.startswith("Kubernetes denied: bob cannot create devicetaintrules")
    assert set(rules_in(cluster)) == set(stored)  # nothing of bob's exists
    theirs.refresh_from_db()
    assert theirs.state == Maintenance.DRAFT and theirs.write_intent == {}

    maintenance_undo(maintenance=ours, user=alice, mode="delete")
    assert rules_in(cluster) == {}


def test_it_shows_authoring_controls_only_to_the_operator_kubernetes_allows(cluster: SimCluster) -> None:
    pages = {}
    for name in ("alice", "bob"):
        browser = Client()
        browser.force_login(user_in("operator", name))
        pages[name] = browser.get("/maintenance/").content.decode()

    assert 'id="new-maintenance"' in pages["alice"]
    assert 'id="new-maintenance"' not in pages["bob"]


def test_it_asks_the_cluster_once_per_user_and_question_within_the_cache_time(
    cluster: SimCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inventory import access

    asked: list[Identity | None] = []
    real = access.cluster_client().can_i

    def counting(**kwargs: Any) -> bool:
        asked.append(kwargs.get("as_user"))
        return real(**kwargs)

    monkeypatch.setattr(access.cluster_client(), "can_i", counting)
    alice = user_in("operator", "alice")
    assert access.user_may_author_rules(alice) and access.user_may_author_rules(alice)
    bob = User.objects.create_user("bob", password="x" * 12)
    assert not access.user_may_author_rules(bob)

    assert [a.user if a else None for a in asked] == ["alice", "bob"]
    assert asked[0] == Identity("alice", ("operator",))
