"""A cordoned node, as on a real cluster: the node lifecycle controller puts the taint
node.kubernetes.io/unschedulable:NoSchedule on it (and takes it off when uncordoned); the scheduler's
NodeUnschedulable filter keeps new pods away unless they tolerate that taint, as a DaemonSet's pods do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from simcluster.testing import SimCluster, run_simcluster
from tests.simcluster.conftest import Kubectl

TAINT = "node.kubernetes.io/unschedulable"


def _taints(api: client.ApiClient, node: str) -> list[tuple[str, str, bool]]:
    found = client.CoreV1Api(api).read_node(node).spec.taints or []
    return [(t.key, t.effect, t.time_added is not None) for t in found]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SimCluster]:
    """The demo topology with its controllers running (the conftest's `api` and `kubectl` use it)."""
    with run_simcluster(topology="demo", kubeconfig_path=tmp_path / "kubeconfig") as running:
        yield running


def _node(cluster: SimCluster) -> str:
    """A node of the demo topology without taints of its own."""
    return next(
        str(n["metadata"]["name"]) for n in cluster.store.list("nodes") if not n["spec"].get("taints")
    )


def _cordon(cluster: SimCluster, api: client.ApiClient, node: str, unschedulable: bool | None = True) -> None:
    """Set the node's spec.unschedulable, as `kubectl cordon` (None: uncordon), and let the controllers settle."""
    client.CoreV1Api(api).patch_node(node, {"spec": {"unschedulable": unschedulable}})
    assert cluster.controllers is not None
    cluster.controllers.wait_idle(30)


def test_cordon_taints_the_node_and_uncordon_takes_the_taint_off(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    node = _node(cluster)

    _cordon(cluster, api, node)
    assert _taints(api, node) == [(TAINT, "NoSchedule", True)]

    _cordon(cluster, api, node, None)
    assert _taints(api, node) == []


def _pod(name: str, node: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"nodeSelector": {"kubernetes.io/hostname": node}, "containers": [{"name": "c", "image": "x"}],
                 **spec},
    }  # fmt: skip


def test_a_pod_tolerating_the_cordon_is_scheduled_on_a_cordoned_node_and_others_wait(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    node = _node(cluster)
    core = client.CoreV1Api(api)
    _cordon(cluster, api, node)

    core.create_namespaced_pod("default", _pod("plain", node))
    tolerant = [{"key": TAINT, "operator": "Exists", "effect": "NoSchedule"}]
    core.create_namespaced_pod("default", _pod("daemon", node, tolerations=tolerant))
    assert cluster.controllers is not None
    cluster.controllers.wait_idle(30)

    assert core.read_namespaced_pod("daemon", "default").spec.node_name == node
    plain = core.read_namespaced_pod("plain", "default")
    assert plain.spec.node_name is None
    scheduled = [c for c in plain.status.conditions or [] if c.type == "PodScheduled"]
    assert "node(s) were unschedulable" in scheduled[0].message


@pytest.mark.kubectl
def test_kubectl_describe_node_shows_the_cordon_taint(cluster: SimCluster, kubectl: Kubectl) -> None:
    live, node = cluster, _node(cluster)
    assert kubectl("cordon", node).stdout == f"node/{node} cordoned\n"
    assert live.controllers is not None
    live.controllers.wait_idle(30)
    described = kubectl("describe", "node", node).stdout
    assert f"Taints:             {TAINT}:NoSchedule" in described
    assert "Unschedulable:      true" in described
