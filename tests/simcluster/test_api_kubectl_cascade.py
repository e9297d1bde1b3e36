"""kubectl 1.37.1's `delete --cascade=foreground` against simcluster: it waits while the garbage collector
deletes the dependents, and the owner reads `deletionTimestamp` and the `foregroundDeletion` finalizer
meanwhile, as on a real cluster."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from simcluster.testing import SimCluster
from tests.simcluster.conftest import kubectl_path
from tests.simcluster.sim_helpers import settle

pytestmark = pytest.mark.kubectl

REPLICASET = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1"}]
"""
# alice may manage ReplicaSets, and nothing else: not their pods
ALICE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: replicasets}
rules:
- apiGroups: [apps]
  resources: [replicasets]
  verbs: [get, list, watch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-replicasets}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: replicasets}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
"""


def _command(tmp_path: Path, *args: str) -> list[str]:
    return [str(kubectl_path()), "--kubeconfig", str(tmp_path / "kubeconfig"), "--cache-dir",
            str(tmp_path / "cache"), *args]  # fmt: skip


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "KUBECTL_INTERACTIVE_DELETE": "false"}


def _run(tmp_path: Path, *args: str, input_text: str | None = None) -> str:
    result = subprocess.run(_command(tmp_path, *args), input=input_text, capture_output=True, text=True,
                            timeout=60, env=_env(tmp_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def _pods(cluster: SimCluster, app: str) -> list[dict[str, Any]]:
    return [
        p
        for p in cluster.store.list("pods", namespace="default")
        if (p["metadata"].get("labels") or {}).get("app") == app
    ]


def _when_marked(cluster: SimCluster, plural: str, name: str) -> threading.Event:
    """Set once the store commits `name` with a deletionTimestamp."""
    marked = threading.Event()

    def on_change(event_type: str, changed: str, obj: dict[str, Any]) -> None:
        if changed == plural and obj["metadata"]["name"] == name and obj["metadata"].get("deletionTimestamp"):
            marked.set()

    cluster.store.subscribe(on_change)
    return marked


def test_it_waits_for_a_foreground_deletion_that_the_user_could_not_do_himself(
    live: SimCluster, tmp_path: Path
) -> None:
    _run(tmp_path, "apply", "-f", "-", input_text=REPLICASET)
    _run(tmp_path, "apply", "-f", "-", input_text=ALICE)
    settle(live)
    held, _ = sorted(p["metadata"]["name"] for p in _pods(live, "web"))
    _run(
        tmp_path,
        "patch",
        "pod",
        held,
        "--type=merge",
        "-p",
        '{"metadata":{"finalizers":["example.com/hold"]}}',
    )
    can_i = subprocess.run(_command(tmp_path, "auth", "can-i", "delete", "pods", "--as=alice"), capture_output=True,
                           text=True, timeout=60, env=_env(tmp_path))  # fmt: skip
    assert (can_i.returncode, can_i.stdout) == (1, "no\n")
    marked = _when_marked(live, "replicasets", "web")

    deleting = subprocess.Popen(_command(tmp_path, "delete", "replicaset", "web", "--cascade=foreground", "--as=alice"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path))  # fmt: skip
    try:
        assert marked.wait(30), "the ReplicaSet was never marked for deletion"
        settle(live)
        shown = yaml.safe_load(_run(tmp_path, "get", "replicaset", "web", "-o", "yaml"))
        assert shown["metadata"]["finalizers"] == ["foregroundDeletion"]
        assert shown["metadata"]["deletionTimestamp"]
        # the collector, not alice, deleted the pods: only the held one is left, and kubectl still waits
        assert [p["metadata"]["name"] for p in _pods(live, "web")] == [held]
        assert deleting.poll() is None

        _run(
            tmp_path,
            "patch",
            "pod",
            held,
            "--type=json",
            "-p",
            '[{"op":"remove","path":"/metadata/finalizers"}]',
        )
        out, err = deleting.communicate(timeout=60)
    finally:
        if deleting.poll() is None:
            deleting.kill()
            deleting.communicate()
    assert deleting.returncode == 0, err
    assert out == 'replicaset.apps "web" deleted from default namespace\n'
    assert _pods(live, "web") == []  # gone before their owner


def test_it_returns_from_a_foreground_deletion_of_a_deployment_once_everything_under_it_is_gone(
    live: SimCluster, tmp_path: Path
) -> None:
    _run(tmp_path, "create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    _run(tmp_path, "rollout", "status", "deployment/web", "--timeout=30s")
    assert len(_pods(live, "web")) == 2

    assert _run(tmp_path, "delete", "deployment", "web", "--cascade=foreground") == (
        'deployment.apps "web" deleted from default namespace\n'
    )

    assert live.store.list("replicasets", namespace="default") == []
    assert _pods(live, "web") == []
