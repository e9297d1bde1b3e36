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


def _revisions(cluster: SimCluster, owner: str) -> list[JSON]:
    """The ControllerRevisions `owner` controls, by revision number."""
    found = [
        r
        for r in cluster.store.list("controllerrevisions", namespace="default")
        if any(
            ref.get("controller") and ref["name"] == owner
            for ref in r["metadata"].get("ownerReferences") or []
        )
    ]
    return sorted(found, key=lambda r: int(r["revision"]))


def _set_image(cluster: SimCluster, plural: str, name: str, container: str, image: str) -> None:
    cluster.store.patch(plural, name, {"spec": {"template": {"spec": {"containers": [
        {"name": container, "image": image}]}}}}, namespace="default")  # fmt: skip
    settle(cluster)


def test_a_daemon_set_and_a_stateful_set_keep_one_revision_per_template_named_after_their_pods_hash() -> None:
    with running() as (cluster, _, _clock):
        cluster.store.create("daemonsets", _daemon_set("agent"))
        cluster.store.create("statefulsets", _stateful_set("web", 2, policy="Parallel"))
        settle(cluster)
        _set_image(cluster, "daemonsets", "agent", "agent", "agent:2")
        _set_image(cluster, "statefulsets", "web", "web", "nginx:1.28")
        for owner, kind, images, hash_label in (
            ("agent", "DaemonSet", ["agent:1", "agent:2"], "controller-revision-hash"),
            ("web", "StatefulSet", ["nginx:1.27", "nginx:1.28"], "controller.kubernetes.io/hash"),
        ):
            revisions = _revisions(cluster, owner)
            assert [r["revision"] for r in revisions] == [1, 2]
            templates = [r["data"]["spec"]["template"] for r in revisions]
            assert [t["spec"]["containers"][0]["image"] for t in templates] == images
            assert {t["$patch"] for t in templates} == {"replace"}
            latest = revisions[-1]
            assert latest["metadata"]["ownerReferences"][0]["kind"] == kind
            assert latest["metadata"]["labels"]["app"] == owner
            hashes = {p["metadata"]["labels"]["controller-revision-hash"] for p in _pods_of(cluster, owner)}
            # a DaemonSet's pods carry the bare hash, a StatefulSet's the revision's name
            expected = (
                latest["metadata"]["name"]
                if kind == "StatefulSet"
                else latest["metadata"]["labels"][hash_label]
            )
            assert hashes == {expected}
            assert latest["metadata"]["name"] == f"{owner}-{latest['metadata']['labels'][hash_label]}"
        template = cluster.store.get("daemonsets", "agent", namespace="default")["spec"]["template"]
        assert _revisions(cluster, "agent")[-1]["data"] == {
            "spec": {"template": {**template, "$patch": "replace"}}
        }


@pytest.mark.parametrize(("plural", "container"), [("daemonsets", "agent"), ("statefulsets", "web")])
def test_a_set_trims_the_revisions_no_pod_uses_to_its_revision_history_limit(
    plural: str, container: str
) -> None:
    with running() as (cluster, _, _clock):
        owner = _daemon_set("agent") if plural == "daemonsets" else _stateful_set("web", 2, policy="Parallel")
        owner["spec"]["revisionHistoryLimit"] = 1
        cluster.store.create(plural, owner)
        settle(cluster)
        for version in (2, 3, 4):
            _set_image(cluster, plural, container, container, f"{container}:{version}")
        revisions = _revisions(cluster, container)
        assert [r["data"]["spec"]["template"]["spec"]["containers"][0]["image"] for r in revisions] == [
            f"{container}:3", f"{container}:4"
        ]  # fmt: skip
        assert [r["revision"] for r in revisions] == [3, 4]


def test_a_stateful_set_pod_below_the_partition_comes_back_at_the_current_revision() -> None:
    with running() as (cluster, _, _clock):
        stateful_set = _stateful_set("web", 3, policy="Parallel")
        stateful_set["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
        cluster.store.create("statefulsets", stateful_set)
        settle(cluster)
        _set_image(cluster, "statefulsets", "web", "web", "nginx:1.28")
        old, new = (r["metadata"]["name"] for r in _revisions(cluster, "web"))
        images = {
            p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in _pods_of(cluster, "web")
        }
        assert images == {"web-0": "nginx:1.27", "web-1": "nginx:1.27", "web-2": "nginx:1.28"}
        cluster.store.delete("pods", "web-0", namespace="default")
        settle(cluster)
        again = cluster.store.get("pods", "web-0", namespace="default")
        assert again["spec"]["containers"][0]["image"] == "nginx:1.27"
        assert again["metadata"]["labels"]["controller-revision-hash"] == old != new


def _history_rows(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()[1:] if line.strip()]


@pytest.mark.kubectl
def test_kubectl_rollout_history_lists_two_revisions_of_a_daemon_set_and_a_stateful_set_after_set_image(
    tmp_path: Path,
) -> None:
    with running(kubeconfig_path=tmp_path / "kubeconfig") as (cluster, _, _clock):
        cluster.store.create("daemonsets", _daemon_set("agent"))
        cluster.store.create("statefulsets", _stateful_set("web", 2))
        _kubectl(tmp_path, "rollout", "status", "ds/agent", "--timeout=60s")
        _kubectl(tmp_path, "rollout", "status", "sts/web", "--timeout=60s")
        _kubectl(tmp_path, "set", "image", "ds/agent", "agent=agent:2")
        _kubectl(tmp_path, "set", "image", "sts/web", "web=nginx:1.28")
        _kubectl(tmp_path, "rollout", "status", "ds/agent", "--timeout=60s")
        _kubectl(tmp_path, "rollout", "status", "sts/web", "--timeout=60s")
        assert _kubectl(tmp_path, "rollout", "history", "ds/agent").splitlines()[0] == "daemonset.apps/agent "
        for target in ("ds/agent", "sts/web"):
            assert _history_rows(_kubectl(tmp_path, "rollout", "history", target)) == [
                "REVISION CHANGE-CAUSE", "1 <none>", "2 <none>"
            ]  # fmt: skip
        first = _kubectl(tmp_path, "rollout", "history", "ds/agent", "--revision=1")
        assert first.startswith("daemonset.apps/agent with revision #1\nPod Template:\n")
        assert "Image:\tagent:1\n" in first
        assert "Image:\tnginx:1.27\n" in _kubectl(tmp_path, "rollout", "history", "sts/web", "--revision=1")
        table = _kubectl(tmp_path, "get", "controllerrevisions", "--sort-by=.revision").splitlines()
        assert table[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
        controllers = sorted(" ".join(line.split()[1:3]) for line in table[1:])
        assert controllers == [
            "daemonset.apps/agent 1", "daemonset.apps/agent 2", "statefulset.apps/web 1", "statefulset.apps/web 2"
        ]  # fmt: skip


@pytest.mark.kubectl
def test_kubectl_rollout_undo_restores_the_old_image_and_rolls_the_pods_of_a_daemon_set_and_a_stateful_set(
    tmp_path: Path,
) -> None:
    with running(kubeconfig_path=tmp_path / "kubeconfig") as (cluster, _, _clock):
        cluster.store.create("daemonsets", _daemon_set("agent"))
        cluster.store.create("statefulsets", _stateful_set("web", 2))
        _kubectl(tmp_path, "rollout", "status", "ds/agent", "--timeout=60s")
        _kubectl(tmp_path, "rollout", "status", "sts/web", "--timeout=60s")
        _kubectl(tmp_path, "set", "image", "ds/agent", "agent=agent:2")
        _kubectl(tmp_path, "set", "image", "sts/web", "web=nginx:1.28")
        _kubectl(tmp_path, "rollout", "status", "ds/agent", "--timeout=60s")
        _kubectl(tmp_path, "rollout", "status", "sts/web", "--timeout=60s")
        settle(cluster)
        before = {p["metadata"]["uid"] for p in _pods_of(cluster, "agent") + _pods_of(cluster, "web")}
        assert _kubectl(tmp_path, "rollout", "undo", "ds/agent") == "daemonset.apps/agent rolled back\n"
        assert _kubectl(tmp_path, "rollout", "undo", "sts/web") == "statefulset.apps/web rolled back\n"
        _kubectl(tmp_path, "rollout", "status", "ds/agent", "--timeout=60s")
        _kubectl(tmp_path, "rollout", "status", "sts/web", "--timeout=60s")
        settle(cluster)
        for name, count, image in (("agent", 3, "agent:1"), ("web", 2, "nginx:1.27")):
            plural = "daemonsets" if name == "agent" else "statefulsets"
            spec = cluster.store.get(plural, name, namespace="default")["spec"]["template"]["spec"]
            assert spec["containers"][0]["image"] == image
            pods = _pods_of(cluster, name)
            assert len(pods) == count
            assert {p["spec"]["containers"][0]["image"] for p in pods} == {image}
            assert not before & {p["metadata"]["uid"] for p in pods}
        # the template that came back keeps its revision, renumbered as the latest
        for target in ("ds/agent", "sts/web"):
            assert _history_rows(_kubectl(tmp_path, "rollout", "history", target))[1:] == [
                "2 <none>",
                "3 <none>",
            ]
        # undoing to the revision already running changes nothing
        assert _kubectl(tmp_path, "rollout", "undo", "ds/agent", "--to-revision=3") == (
            "daemonset.apps/agent skipped rollback (current template already matches revision 3)\n"
        )


def test_a_burst_of_replica_set_pods_wakes_only_the_controllers_that_act_on_them() -> None:
    """Upstream's event handlers drop a pod its controller does not own (DaemonSet, StatefulSet), one no
    budget can select (disruption: no PodDisruptionBudget exists) and one without a claim-backed volume
    (pvc-protection); woken by every pod write, each of these loops took a pass per batch of a burst,
    with the GIL, from the scheduler."""
    with running() as (cluster, controllers, _clock):
        quiet = ("daemonsets", "statefulsets", "disruption", "storage", "deployments")
        before = {name: controllers.loops[name].passes for name in (*quiet, "owners")}
        cluster.store.create(
            "replicasets",
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "replicas": 4,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                    },
                },
            },
        )
        settle(cluster)
        pods = _pods_of(cluster, "web")
        assert len(pods) == 4 and all(p["status"].get("phase") == "Running" for p in pods)
        passes = {name: controllers.loops[name].passes - before[name] for name in before}
        assert passes["owners"] > 0
        assert {name: passes[name] for name in quiet} == dict.fromkeys(quiet, 0)

        # Once a budget exists, the same pods' changes reach the disruption controller again.
        cluster.store.create(
            "poddisruptionbudgets",
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "web"}}},
            },
        )
        settle(cluster)
        budget = cluster.store.get("poddisruptionbudgets", "web", namespace="default")
        assert budget["status"]["currentHealthy"] == 4
        cluster.store.delete("pods", pods[0]["metadata"]["name"], namespace="default")
        settle(cluster)
        budget = cluster.store.get("poddisruptionbudgets", "web", namespace="default")
        assert (
            budget["status"]["currentHealthy"] == 4
        )  # the ReplicaSet replaced the pod, the budget counted it
        assert pods[0]["metadata"]["name"] not in {p["metadata"]["name"] for p in _pods_of(cluster, "web")}
