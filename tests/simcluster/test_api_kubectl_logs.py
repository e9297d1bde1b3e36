"""Real kubectl 1.37.1 `logs` against simcluster: simulated containers print nothing, and the refusals are a
real cluster's (the API server's container checks, the kubelet's waiting and previous-container answers)."""

from __future__ import annotations

from typing import Any

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl

pytestmark = pytest.mark.kubectl


def _pod(cluster: SimCluster, name: str, *, node: str | None, state: dict[str, Any] | None) -> None:
    spec: dict[str, Any] = {"containers": [{"name": "trainer", "image": "registry.example.com/trainer:1.4"}]}
    if node:
        spec["nodeName"] = node
    cluster.store.create("pods", {"metadata": {"name": name, "namespace": "default"}, "spec": spec})
    if state is not None:
        status = {"phase": "Running" if "running" in state else "Pending",
                  "containerStatuses": [{"name": "trainer", "image": "registry.example.com/trainer:1.4",
                                         "imageID": "", "ready": "running" in state, "restartCount": 0,
                                         "state": state}]}  # fmt: skip
        cluster.store.patch("pods", name, {"status": status}, namespace="default", subresource="status")


def test_it_serves_an_empty_log_for_a_running_container(kubectl: Kubectl, cluster: SimCluster) -> None:
    _pod(cluster, "trainer", node="worker-07", state={"running": {"startedAt": "2026-01-01T00:00:00Z"}})
    result = kubectl("logs", "trainer", "--tail=20")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert kubectl("auth", "can-i", "get", "pods", "--subresource=log").stdout == "yes\n"


def test_it_answers_for_the_kubelet_when_there_is_no_log(kubectl: Kubectl, cluster: SimCluster) -> None:
    _pod(cluster, "pulling", node="worker-07", state={"waiting": {"reason": "ContainerCreating"}})
    _pod(cluster, "trainer", node="worker-07", state={"running": {"startedAt": "2026-01-01T00:00:00Z"}})
    waiting = kubectl("logs", "pulling")
    assert waiting.returncode == 1
    assert waiting.stderr == (
        'Error from server (BadRequest): container "trainer" in pod "pulling" is waiting to start: '
        "ContainerCreating\n"
    )
    previous = kubectl("logs", "trainer", "--previous")
    assert previous.stderr == (
        'Error from server (BadRequest): previous terminated container "trainer" in pod "trainer" not found\n'
    )
    missing = kubectl("logs", "gone")
    assert (
        missing.stderr
        == 'error: error from server (NotFound): pods "gone" not found in namespace "default"\n'
    )
