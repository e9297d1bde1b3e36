"""The simulated scheduler filters, then scores, as kube-scheduler does: it looks for
percentageOfNodesToScore's number of feasible nodes and takes the best of them (LeastAllocated cpu and
memory, preferred node affinity, PreferNoSchedule taints)."""

from __future__ import annotations

from typing import Any

import pytest

from simcluster.controllers.scoring import (
    feasible_nodes_to_find,
    least_allocated,
    normalize,
    pod_requests,
)
from tests.simcluster.sim_helpers import JSON, pods, running, settle


@pytest.mark.parametrize(
    ("nodes", "percentage", "found"),
    [(18, 0, 18), (99, 0, 99), (100, 0, 100), (250, 0, 120), (1000, 0, 420), (3000, 0, 780),
     (5000, 0, 500), (6000, 0, 300), (10_000, 0, 500), (3000, 10, 300), (3000, 1, 100), (3000, 100, 3000)],
)  # fmt: skip
def test_it_looks_for_as_many_feasible_nodes_as_kube_scheduler(
    nodes: int, percentage: int, found: int
) -> None:
    # adaptive: 50 % − nodes/125, at least 5 %, at least 100 nodes; every node below 100
    assert feasible_nodes_to_find(nodes, percentage) == found


def test_it_counts_requests_as_the_scorer_does() -> None:
    assert pod_requests({"spec": {"containers": [{"name": "a"}]}}) == (
        100,
        200 * 1024 * 1024,
    )  # non-zero defaults
    two = {"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}},
                                   {"name": "b", "resources": {"requests": {"cpu": "2"}}}],
                    "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "8"}}}],
                    "overhead": {"cpu": "250m"}}}  # fmt: skip
    assert pod_requests(two) == (8250, 1024**3 + 200 * 1024 * 1024)
    assert least_allocated((0, 0), (64_000, 512 * 1024**3)) == 100
    assert least_allocated((32_000, 0), (64_000, 512 * 1024**3)) == 75
    assert least_allocated((65_000, 0), (64_000, 512 * 1024**3)) == 50  # cpu over capacity scores 0
    assert normalize([0, 5, 10]) == [0, 50, 100] and normalize([0, 0]) == [0, 0]
    assert normalize([0, 1, 2], reverse=True) == [100, 50, 0] and normalize([0, 0], reverse=True) == [
        100,
        100,
    ]


def _pod(name: str, *, cpu: str | None = None, tolerations: list[JSON] | None = None) -> JSON:
    container: JSON = {"name": "main", "image": "registry.example.com/web:1"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: JSON = {"containers": [container]}
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec,
            "metadata": {"name": name, "namespace": "default", "labels": {"app": name.rstrip("0123456789-")}}}  # fmt: skip


def _node_of(cluster: Any, name: str) -> str:
    return str(cluster.store.get("pods", name, namespace="default")["spec"]["nodeName"])


def test_it_places_pods_on_the_least_allocated_node_not_the_next_in_the_rotation() -> None:
    with running() as (cluster, _, _):
        cluster.store.create("pods", _pod("hog", cpu="48"))
        settle(cluster)
        busy = _node_of(cluster, "hog")
        for i in range(4):  # the rotation alone would come back to the busy node with the third
            cluster.store.create("pods", _pod(f"light-{i}"))
            settle(cluster)
        assert busy not in {p["spec"]["nodeName"] for p in pods(cluster, app="light")}
        assert all(p["status"]["phase"] == "Running" for p in pods(cluster, app="light"))


def test_it_avoids_a_prefer_no_schedule_taint_unless_the_pod_tolerates_it() -> None:
    with running() as (cluster, _, _):
        taint = {"key": "example.com/draining", "value": "soon", "effect": "PreferNoSchedule"}
        cluster.store.patch("nodes", "node-1", {"spec": {"taints": [taint]}})
        for i in range(4):
            cluster.store.create("pods", _pod(f"plain-{i}"))
            settle(cluster)
        assert "node-1" not in {p["spec"]["nodeName"] for p in pods(cluster, app="plain")}
        tolerating = [{"key": "example.com/draining", "operator": "Exists", "effect": "PreferNoSchedule"}]
        for i in range(3):
            cluster.store.create("pods", _pod(f"calm-{i}", tolerations=tolerating))
            settle(cluster)
        assert "node-1" in {p["spec"]["nodeName"] for p in pods(cluster, app="calm")}
