"""A kind the mirror's credentials may not list is "forbidden" — on the pages and in the API — and the other
kinds keep mirroring. The credentials: a ServiceAccount token from `kubectl create token`, RBAC without
PodDisruptionBudgets."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client

from dra.kinds import BY_PLURAL
from inventory.kube import MIRRORED_KINDS, connect
from inventory.middleware import DATA_SYNCED_HEADER
from inventory.mirror.runner import Mirror, MirrorHandle, wait_for_sync
from inventory.models import KubeObject, WatchState
from tests.inventory.mirror.helpers import cluster_state, db_state, wait_until
from tests.kubectl import kubectl_binary

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.kubectl]

OMITTED = "poddisruptionbudgets"
ALLOWED = [k for k in MIRRORED_KINDS if k != OMITTED]


def kubectl(kubeconfig: Path, tmp_path: Path, *args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [str(kubectl_binary()), "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"), *args],
        input=stdin, capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def rbac_without(kind: str) -> list[dict[str, Any]]:
    rules = [
        {"apiGroups": [BY_PLURAL[k].group], "resources": [k], "verbs": ["get", "list", "watch"]}
        for k in MIRRORED_KINDS
        if k != kind
    ]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "mirror", "namespace": "default"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "mirror"},
         "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "mirror"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "mirror"},
         "subjects": [{"kind": "ServiceAccount", "name": "mirror", "namespace": "default"}]},
    ]  # fmt: skip


@pytest.fixture
def mirror(simcluster: Any, tmp_path: Path) -> Iterator[MirrorHandle]:
    admin = simcluster.kubeconfig_path
    kubectl(admin, tmp_path, "apply", "-f", "-", stdin=yaml.safe_dump_all(rbac_without(OMITTED)))
    token = kubectl(admin, tmp_path, "create", "token", "mirror", "-n", "default").strip()
    kubeconfig = simcluster.user_kubeconfig(tmp_path / "mirror-kubeconfig", token=token)
    handle = Mirror(connect(str(kubeconfig)), inactivity_timeout=30, resync_seconds=0).start()
    assert wait_for_sync(handle, timeout=30)
    yield handle
    handle.stop()


def test_it_shows_a_forbidden_kind_as_forbidden_and_keeps_mirroring_the_rest(
    simcluster: Any, mirror: MirrorHandle
) -> None:
    states = dict(WatchState.objects.values_list("kind", "state"))
    assert states[OMITTED] == "forbidden"
    assert "forbidden" in WatchState.objects.get(kind=OMITTED).error
    served = [k for k in ALLOWED if k != "resourcepoolstatusrequests"]
    assert {states[k] for k in served} == {"synced"}
    assert db_state(served) == cluster_state(simcluster, served)
    assert not KubeObject.objects.filter(kind=OMITTED).exists()

    simcluster.store.create(
        "devicetaintrules",
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "still-works"},
         "spec": {"deviceSelector": {"driver": "gpu.example.com"},
                  "taint": {"key": "example.com/t", "effect": "None"}}},
    )  # fmt: skip
    wait_until(
        lambda: KubeObject.objects.filter(kind="devicetaintrules", name="still-works").exists(),
        what="a rule to arrive while another kind is forbidden",
    )
    client = Client()
    client.force_login(User.objects.create_user("viewer", password="x" * 12))
    page = client.get("/claims/").content.decode()
    assert 'data-kind="poddisruptionbudgets" data-state="forbidden"' in page
    api = client.get("/api/devices/")
    assert api.status_code == 200 and api[DATA_SYNCED_HEADER] == "false"
