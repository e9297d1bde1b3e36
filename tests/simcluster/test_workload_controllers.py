"""The DaemonSet and StatefulSet controllers, as kube-controller-manager's keep their pods: one daemon pod per
fitting node, stateful pods created in order and removed in reverse, and `kubectl rollout status` finishing
for both."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from simcluster.testing import SimCluster
from tests.simcluster.conftest import kubectl_path
from tests.simcluster.sim_helpers import running, settle

JSON = dict[str, Any]


def _daemon_set(name: str, *, node_selector: dict[str, str] | None = None, image: str = "agent:1") -> JSON:
    spec: JSON = {"containers": [{"name": "agent", "image": image}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


def _stateful_set(name: str, replicas: int, *, policy: str = "OrderedReady") -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "serviceName": name,
            "replicas": replicas,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                }
            ],
        },
    }


def _pods_of(cluster: SimCluster, app: str) -> list[JSON]:
    return [
        p
        for p in cluster.store.list("pods", namespace="default")
        if (p["metadata"].get("labels") or {}).get("app") == app
    ]


def _by_node(cluster: SimCluster, app: str) -> dict[str, str]:
    return {p["spec"].get("nodeName", ""): p["metadata"]["name"] for p in _pods_of(cluster, app)}


def _taint(cluster: SimCluster, node: str, effect: str) -> None:
    cluster.store.patch(
        "nodes", node, {"spec": {"taints": [{"key": "dedicated", "value": "x", "effect": effect}]}}
    )


def _mark_ready(cluster: SimCluster, name: str, *, node: str = "node-0") -> None:
    """What the scheduler and kubelet would do: bind the pod and start it."""
    cluster.store.bind_pod(name, namespace="default", node=node)
    ready = [
        {"type": t, "status": "True"} for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
    ]
    cluster.store.patch(
        "pods",
        name,
        {"status": {"phase": "Running", "conditions": ready}},
        namespace="default",
        subresource="status",
    )


def _node_of(pod: JSON) -> str:
    """The node a daemon pod is for (its required node affinity names it)."""
    required = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return str(required["nodeSelectorTerms"][0]["matchFields"][0]["values"][0])


def test_a_daemon_set_puts_one_pod_on_each_fitting_node_and_none_on_a_tainted_or_unselected_one() -> None:
    with running() as (cluster, _, _clock):
        _taint(cluster, "node-1", "NoSchedule")
        settle(cluster)
        # node-0 and node-1 are h100 nodes, node-2 is not; node-1 carries an untolerated taint
        cluster.store.create(
            "daemonsets", _daemon_set("agent", node_selector={"example.com/gpu-model": "h100"})
        )
        settle(cluster)
        pods = _pods_of(cluster, "agent")
        assert [p["spec"].get("nodeName") for p in pods] == ["node-0"]
        pod = pods[0]
        assert pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-0"]}]}
            ]
        }
        ds = cluster.store.get("daemonsets", "agent", namespace="default")
        owner = pod["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("DaemonSet", "agent", True)
        assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
        assert pod["metadata"]["labels"]["controller-revision-hash"]
        tolerated = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
        assert ("node.kubernetes.io/unschedulable", "NoSchedule") in tolerated
        assert ("node.kubernetes.io/not-ready", "NoExecute") in tolerated
        status = ds["status"]
        assert (status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"],
                status["numberAvailable"], status["updatedNumberScheduled"], status["numberMisscheduled"],
                status["observedGeneration"]) == (1, 1, 1, 1, 1, 0, 1)  # fmt: skip

        # the taint goes: node-1 gets its pod; the node no longer selected loses its pod
        cluster.store.patch("nodes", "node-1", {"spec": {"taints": None}})
        settle(cluster)
        assert sorted(_by_node(cluster, "agent")) == ["node-0", "node-1"]
        cluster.store.patch("nodes", "node-0", {"metadata": {"labels": {"example.com/gpu-model": "other"}}})
        settle(cluster)
        assert sorted(_by_node(cluster, "agent")) == ["node-1"]

        # a new NoSchedule taint leaves a running daemon pod where it is, a NoExecute one removes it
        _taint(cluster, "node-1", "NoSchedule")
        settle(cluster)
        assert sorted(_by_node(cluster, "agent")) == ["node-1"]
        _taint(cluster, "node-1", "NoExecute")
        settle(cluster)
        assert _by_node(cluster, "agent") == {}
        reasons = [e["reason"] for e in cluster.store.list("events", namespace="default")
                   if e["involvedObject"]["name"] == "agent"]  # fmt: skip
        assert "SuccessfulCreate" in reasons and "SuccessfulDelete" in reasons


def test_a_daemon_set_rolls_its_template_out_one_node_at_a_time() -> None:
    with running() as (cluster, _, _clock):
        cluster.store.create("daemonsets", _daemon_set("agent"))
        settle(cluster)
        before = _by_node(cluster, "agent")
        assert sorted(before) == ["node-0", "node-1", "node-2"]
        cluster.store.patch("daemonsets", "agent", {"spec": {"template": {"spec": {"containers": [
            {"name": "agent", "image": "agent:2"}]}}}}, namespace="default")  # fmt: skip
        settle(cluster)
        after = _pods_of(cluster, "agent")
        assert sorted(p["spec"]["nodeName"] for p in after) == ["node-0", "node-1", "node-2"]
        assert {p["spec"]["containers"][0]["image"] for p in after} == {"agent:2"}
        assert {p["metadata"]["labels"]["pod-template-generation"] for p in after} == {"2"}
        assert not set(before.values()) & {p["metadata"]["name"] for p in after}
        status = cluster.store.get("daemonsets", "agent", namespace="default")["status"]
        assert (
            status["updatedNumberScheduled"],
            status["numberAvailable"],
            status["observedGeneration"],
        ) == (3, 3, 2)


def test_a_surging_daemon_set_starts_the_new_pod_beside_the_old_one_until_it_is_ready() -> None:
    # no scheduler: the test binds and starts the pods, so a new pod stays unready until it says so
    with running(disable=("scheduler",)) as (cluster, _, _clock):
        agent = _daemon_set("agent", node_selector={"topology.kubernetes.io/zone": "zone-a"})
        agent["spec"]["updateStrategy"] = {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
        }
        cluster.store.create("daemonsets", agent)
        settle(cluster)
        for pod in _pods_of(cluster, "agent"):
            _mark_ready(cluster, pod["metadata"]["name"], node=_node_of(pod))
        settle(cluster)
        olds = {_node_of(p): p["metadata"]["name"] for p in _pods_of(cluster, "agent")}
        assert sorted(olds) == ["node-0", "node-1"]
        cluster.store.patch("daemonsets", "agent", {"spec": {"template": {"spec": {"containers": [
            {"name": "agent", "image": "agent:2"}]}}}}, namespace="default")  # fmt: skip
        settle(cluster)
        new = [p for p in _pods_of(cluster, "agent") if p["metadata"]["name"] not in olds.values()]
        assert len(new) == 1  # maxSurge 1: one new pod, beside its node's old one, which stays
        assert len(_pods_of(cluster, "agent")) == 3
        first = _node_of(new[0])
        _mark_ready(cluster, new[0]["metadata"]["name"], node=first)
        settle(cluster)
        names = {p["metadata"]["name"] for p in _pods_of(cluster, "agent")}
        assert olds[first] not in names  # replaced once the new one is available
        other = "node-1" if first == "node-0" else "node-0"
        assert olds[other] in names and len(names) == 3  # the next node's surge pod has started


def test_a_stateful_set_creates_its_pods_in_order_and_removes_them_in_reverse() -> None:
    # no kubelet: a deleted pod stays Terminating, so one removal at a time shows
    with running(disable=("scheduler", "pods")) as (cluster, _, _clock):
        cluster.store.create("statefulsets", _stateful_set("web", 3))
        settle(cluster)
        assert [p["metadata"]["name"] for p in _pods_of(cluster, "web")] == ["web-0"]  # not yet ready
        web0 = cluster.store.get("pods", "web-0", namespace="default")
        assert (web0["spec"]["hostname"], web0["spec"]["subdomain"]) == ("web-0", "web")
        labels = web0["metadata"]["labels"]
        assert labels["statefulset.kubernetes.io/pod-name"] == "web-0"
        assert labels["apps.kubernetes.io/pod-index"] == "0"
        assert labels["controller-revision-hash"].startswith("web-")
        assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}} in web0["spec"][
            "volumes"
        ]
        assert cluster.store.get("persistentvolumeclaims", "data-web-0", namespace="default")
        _mark_ready(cluster, "web-0")
        settle(cluster)
        assert sorted(p["metadata"]["name"] for p in _pods_of(cluster, "web")) == ["web-0", "web-1"]
        _mark_ready(cluster, "web-1")
        settle(cluster)
        _mark_ready(cluster, "web-2")
        settle(cluster)
        sts = cluster.store.get("statefulsets", "web", namespace="default")
        assert (
            sts["status"]["replicas"],
            sts["status"]["readyReplicas"],
            sts["status"]["updatedReplicas"],
        ) == (3, 3, 3)
        assert (
            sts["status"]["currentRevision"]
            == sts["status"]["updateRevision"]
            == labels["controller-revision-hash"]
        )

        cluster.store.patch("statefulsets", "web", {"spec": {"replicas": 1}}, namespace="default")
        settle(cluster)
        terminating = [
            p["metadata"]["name"] for p in _pods_of(cluster, "web") if p["metadata"].get("deletionTimestamp")
        ]
        assert terminating == ["web-2"]  # the highest first, and web-1 waits for it to be gone


def test_a_stateful_set_scaled_down_removes_its_highest_healthy_pod_while_a_lower_one_is_unready() -> None:
    # upstream: a condemned pod that is Running and Ready goes; only an unhealthy one waits its turn
    with running(disable=("scheduler", "pods")) as (cluster, _, _clock):
        cluster.store.create("statefulsets", _stateful_set("web", 3))
        for name in ("web-0", "web-1", "web-2"):
            settle(cluster)
            _mark_ready(cluster, name)
        settle(cluster)
        unready = [{"type": "Ready", "status": "False"}, {"type": "ContainersReady", "status": "False"}]
        cluster.store.patch("pods", "web-1", {"status": {"conditions": unready}}, namespace="default",
                            subresource="status")  # fmt: skip
        cluster.store.patch("statefulsets", "web", {"spec": {"replicas": 1}}, namespace="default")
        settle(cluster)
        terminating = [
            p["metadata"]["name"] for p in _pods_of(cluster, "web") if p["metadata"].get("deletionTimestamp")
        ]
        assert terminating == ["web-2"]


def test_a_parallel_stateful_set_creates_all_its_pods_at_once_without_a_failed_pass(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        caplog.at_level(logging.ERROR, logger="simcluster.controllers"),
        running(disable=("scheduler",)) as (
            cluster,
            _,
            _clock,
        ),
    ):
        cluster.store.create("statefulsets", _stateful_set("db", 3, policy="Parallel"))
        settle(cluster)
        assert sorted(p["metadata"]["name"] for p in _pods_of(cluster, "db")) == ["db-0", "db-1", "db-2"]
    assert [r.getMessage() for r in caplog.records if r.name == "simcluster.controllers"] == []


def _kubectl(tmp_path: Path, *args: str) -> str:
    result = subprocess.run(
        [str(kubectl_path()), "--kubeconfig", str(tmp_path / "kubeconfig"), "--cache-dir", str(tmp_path / "cache"),
         *args], capture_output=True, text=True, timeout=90, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.kubectl
def test_kubectl_rollout_status_finishes_for_a_daemon_set_and_a_stateful_set(tmp_path: Path) -> None:
    with running(kubeconfig_path=tmp_path / "kubeconfig") as (cluster, _, _clock):
        cluster.store.create("daemonsets", _daemon_set("agent"))
        cluster.store.create("statefulsets", _stateful_set("web", 3))
        assert _kubectl(tmp_path, "rollout", "status", "ds/agent", "--timeout=60s").endswith(
            'daemon set "agent" successfully rolled out\n'
        )
        assert _kubectl(tmp_path, "rollout", "status", "sts/web", "--timeout=60s").endswith(
            "partitioned roll out complete: 3 new pods have been updated...\n"
        )
        _kubectl(tmp_path, "set", "image", "ds/agent", "agent=agent:2")
        _kubectl(tmp_path, "set", "image", "sts/web", "web=nginx:1.28")
        assert _kubectl(tmp_path, "rollout", "status", "ds/agent", "--timeout=60s").endswith(
            'daemon set "agent" successfully rolled out\n'
        )
        assert _kubectl(tmp_path, "rollout", "status", "sts/web", "--timeout=60s").endswith(
            "partitioned roll out complete: 3 new pods have been updated...\n"
        )
        settle(cluster)
        images = {p["spec"]["containers"][0]["image"] for p in _pods_of(cluster, "web")}
        assert images == {"nginx:1.28"}
