"""The Eviction API with PodDisruptionBudget semantics, the disruption controller's PDB status, Deployments
with their ReplicaSets, and `kubectl drain` / `cordon` / `uncordon` as on a real cluster."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from simcluster.testing import SimCluster, run_simcluster
from tests.simcluster.conftest import kubectl_path
from tests.simcluster.sim_helpers import condition, settle

JSON = dict[str, Any]


def _deployment(name: str, replicas: int, *, image: str = "nginx:1") -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
        },
    }


def _pdb(name: str, app: str, **spec: Any) -> JSON:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}, **spec}}  # fmt: skip


def _eviction(name: str, api_version: str = "policy/v1", **options: Any) -> JSON:
    body: JSON = {
        "apiVersion": api_version,
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": "default"},
    }
    if options:
        body["deleteOptions"] = options
    return body


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[SimCluster, client.ApiClient]]:
    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kubeconfig") as cluster:
        api = config.new_client_from_config(str(tmp_path / "kubeconfig"))
        try:
            yield cluster, api
        finally:
            api.close()


def _pods(cluster: SimCluster, app: str) -> list[JSON]:
    return [
        p
        for p in cluster.store.list("pods", namespace="default")
        if (p["metadata"].get("labels") or {}).get("app") == app
    ]


def _evict(cluster: SimCluster, name: str, body: JSON | None = None) -> tuple[int, JSON]:
    from tests.simcluster.conftest import Http

    http = Http(cluster.url, cluster.ssl_context())
    status, _, answer = http.request(
        "POST", f"/api/v1/namespaces/default/pods/{name}/eviction", body or _eviction(name)
    )
    return status, answer


def _start(cluster: SimCluster, *objects: JSON) -> None:
    for obj in objects:
        plural = "deployments" if obj["kind"] == "Deployment" else "poddisruptionbudgets"
        cluster.store.create(plural, obj)
    settle(cluster)


def test_it_keeps_the_pdb_status_current(world: tuple[SimCluster, client.ApiClient]) -> None:
    cluster, _ = world
    _start(cluster, _deployment("web", 4), _pdb("by-count", "web", minAvailable=3))
    status = cluster.store.get("poddisruptionbudgets", "by-count", namespace="default")["status"]
    assert {k: status[k] for k in ("currentHealthy", "desiredHealthy", "expectedPods", "disruptionsAllowed",
                                   "observedGeneration")} == {"currentHealthy": 4, "desiredHealthy": 3,
                                                              "expectedPods": 4, "disruptionsAllowed": 1,
                                                              "observedGeneration": 1}  # fmt: skip
    allowed = condition({"status": status}, "DisruptionAllowed")
    assert allowed is not None and (allowed["status"], allowed["reason"]) == ("True", "SufficientPods")
    cluster.store.patch(
        "poddisruptionbudgets", "by-count", {"spec": {"minAvailable": "50%"}}, namespace="default"
    )
    settle(cluster)
    status = cluster.store.get("poddisruptionbudgets", "by-count", namespace="default")["status"]
    assert (status["desiredHealthy"], status["disruptionsAllowed"], status["observedGeneration"]) == (2, 2, 2)
    cluster.store.patch("poddisruptionbudgets", "by-count", {"spec": {"minAvailable": None, "maxUnavailable": "25%"}},
                        namespace="default")  # fmt: skip
    settle(cluster)
    status = cluster.store.get("poddisruptionbudgets", "by-count", namespace="default")["status"]
    assert (status["expectedPods"], status["desiredHealthy"], status["disruptionsAllowed"]) == (4, 3, 1)


def test_it_reports_a_sync_failure_for_pods_without_a_scalable_controller(
    world: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, _ = world
    cluster.store.create("pods", {"apiVersion": "v1", "kind": "Pod",
                                  "metadata": {"name": "lonely", "namespace": "default", "labels": {"app": "lonely"}},
                                  "spec": {"nodeName": "node-0", "containers": [{"name": "c", "image": "x"}]}})  # fmt: skip
    _start(cluster, _pdb("lonely", "lonely", maxUnavailable=1))
    status = cluster.store.get("poddisruptionbudgets", "lonely", namespace="default")["status"]
    allowed = condition({"status": status}, "DisruptionAllowed")
    assert allowed is not None
    assert (allowed["status"], allowed["reason"], allowed["message"]) == (
        "False",
        "SyncFailed",
        'found no controller ref for pod "lonely"',
    )
    code, body = _evict(cluster, "lonely")
    assert code == 429
    assert body["details"]["causes"] == [{
        "reason": "DisruptionBudget",
        "message": "The disruption budget lonely is still being processed by the server.",
    }], "a failed sync never observed the generation"  # fmt: skip


def test_it_evicts_within_the_budget_and_marks_the_pod(world: tuple[SimCluster, client.ApiClient]) -> None:
    cluster, api = world
    _start(cluster, _deployment("web", 3), _pdb("web", "web", minAvailable=2))
    victim = _pods(cluster, "web")[0]
    name = victim["metadata"]["name"]
    seen: list[JSON] = []
    unsubscribe = cluster.store.subscribe(
        lambda kind, plural, obj: seen.append(obj) if plural == "pods" else None
    )
    try:
        client.CoreV1Api(api).create_namespaced_pod_eviction(name, "default", _eviction(name))
    finally:
        unsubscribe()
    marked = next(o for o in seen if o["metadata"]["name"] == name and condition(o, "DisruptionTarget"))
    target = condition(marked, "DisruptionTarget")
    assert target is not None
    assert (target["status"], target["reason"], target["message"]) == ("True", "EvictionByEvictionAPI",
                                                                      "Eviction API: evicting")  # fmt: skip
    settle(cluster)
    names = {p["metadata"]["name"] for p in _pods(cluster, "web")}
    assert name not in names and len(names) == 3, "the ReplicaSet replaced the evicted pod"


def test_it_refuses_with_429_when_the_budget_is_spent(world: tuple[SimCluster, client.ApiClient]) -> None:
    cluster, _ = world
    _start(cluster, _deployment("web", 2), _pdb("web", "web", minAvailable=2))
    name = _pods(cluster, "web")[0]["metadata"]["name"]
    code, body = _evict(cluster, name)
    assert code == 429
    assert body == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.", "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]},
        "code": 429,
    }  # fmt: skip
    assert name in {p["metadata"]["name"] for p in _pods(cluster, "web")}


def test_it_spends_one_disruption_per_eviction_until_the_controller_catches_up(
    world: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, _ = world
    _start(cluster, _deployment("web", 3), _pdb("web", "web", minAvailable=2))
    cluster.controllers.loops["disruption"].stop()  # freeze the PDB status between the two evictions
    first, second = (p["metadata"]["name"] for p in _pods(cluster, "web")[:2])
    assert _evict(cluster, first)[0] == 201
    pdb = cluster.store.get("poddisruptionbudgets", "web", namespace="default")
    assert pdb["status"]["disruptionsAllowed"] == 0
    assert list(pdb["status"]["disruptedPods"]) == [first]
    assert condition(pdb, "DisruptionAllowed")["reason"] == "InsufficientPods"  # type: ignore[index]
    assert _evict(cluster, second)[0] == 429


def test_it_answers_500_for_a_pod_under_two_budgets(world: tuple[SimCluster, client.ApiClient]) -> None:
    cluster, _ = world
    _start(
        cluster,
        _deployment("web", 3),
        _pdb("one", "web", maxUnavailable=1),
        _pdb("two", "web", maxUnavailable=1),
    )
    code, body = _evict(cluster, _pods(cluster, "web")[0]["metadata"]["name"])
    assert (code, body) == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        "code": 500,
    })  # fmt: skip


def test_it_evicts_pending_and_unready_pods_as_upstream_does(
    world: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, _ = world
    _start(cluster, _deployment("web", 2), _pdb("web", "web", minAvailable=2))
    pending = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "waiting", "namespace": "default", "labels": {"app": "web"}},
               "spec": {"containers": [{"name": "c", "image": "x"}], "nodeSelector": {"nowhere": "true"}}}  # fmt: skip
    cluster.store.create("pods", pending)
    assert _evict(cluster, "waiting")[0] == 201, "a Pending pod is not guarded by its budget"
    name = _pods(cluster, "web")[0]["metadata"]["name"]
    pod = cluster.store.get("pods", name, namespace="default")
    pod["status"]["conditions"] = [
        c if c["type"] != "Ready" else {**c, "status": "False"} for c in pod["status"]["conditions"]
    ]
    cluster.store.update("pods", pod, subresource="status")
    settle(cluster)
    assert (
        cluster.store.get("poddisruptionbudgets", "web", namespace="default")["status"]["currentHealthy"] == 1
    )
    assert _evict(cluster, name)[0] == 429, "unready, but the budget is not met (IfHealthyBudget)"
    cluster.store.patch("poddisruptionbudgets", "web", {"spec": {"unhealthyPodEvictionPolicy": "AlwaysAllow"}},
                        namespace="default")  # fmt: skip
    settle(cluster)
    assert _evict(cluster, name)[0] == 201, "AlwaysAllow lets an unready pod go"


def test_it_checks_the_eviction_body(world: tuple[SimCluster, client.ApiClient]) -> None:
    cluster, _ = world
    _start(cluster, _deployment("web", 1))
    name = _pods(cluster, "web")[0]["metadata"]["name"]
    assert _evict(cluster, name, _eviction("other")) == (400, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "name in URL does not match name in Eviction object", "reason": "BadRequest", "code": 400,
    })  # fmt: skip
    assert _evict(cluster, "ghost", _eviction("ghost"))[0] == 404
    assert _evict(cluster, name, _eviction(name, "policy/v1beta1", dryRun=["All"]))[0] == 201
    assert name in {p["metadata"]["name"] for p in _pods(cluster, "web")}, "a dry run deletes nothing"


# --------------------------------------------------------------------------------------------- Deployments


def test_it_rolls_a_deployment_out_through_replica_sets(world: tuple[SimCluster, client.ApiClient]) -> None:
    cluster, api = world
    apps = client.AppsV1Api(api)
    apps.create_namespaced_deployment("default", _deployment("web", 3))
    settle(cluster)
    first = cluster.store.list("replicasets", namespace="default")
    assert len(first) == 1
    digest = first[0]["metadata"]["labels"]["pod-template-hash"]
    assert first[0]["metadata"]["name"] == f"web-{digest}"
    assert first[0]["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": digest}
    assert first[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    apps.patch_namespaced_deployment("web", "default", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "nginx:2"}]}}}})  # fmt: skip
    settle(cluster)
    sets = {rs["metadata"]["name"]: rs for rs in cluster.store.list("replicasets", namespace="default")}
    assert len(sets) == 2
    new = next(rs for rs in sets.values() if rs["metadata"]["name"] != first[0]["metadata"]["name"])
    assert (new["spec"]["replicas"], sets[first[0]["metadata"]["name"]]["spec"]["replicas"]) == (3, 0)
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    images = {p["spec"]["containers"][0]["image"] for p in _pods(cluster, "web")}
    assert images == {"nginx:2"}
    status = apps.read_namespaced_deployment_status("web", "default").status
    assert (status.replicas, status.updated_replicas, status.available_replicas) == (3, 3, 3)
    apps.delete_namespaced_deployment("web", "default")
    settle(cluster)
    assert cluster.store.list("replicasets", namespace="default") == []
    assert _pods(cluster, "web") == [], "the garbage collector's background deletion"


def test_it_serves_leases_with_optimistic_concurrency(world: tuple[SimCluster, client.ApiClient]) -> None:
    _, api = world
    leases = client.CoordinationV1Api(api)
    lease = leases.create_namespaced_lease("default", {"metadata": {"name": "mirror"},
                                                       "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}})  # fmt: skip
    lease.spec.holder_identity = "b"
    leases.replace_namespaced_lease("mirror", "default", lease)
    with pytest.raises(client.ApiException) as stale:
        lease.spec.holder_identity = "c"
        leases.replace_namespaced_lease("mirror", "default", lease)  # the resourceVersion it read is gone
    assert stale.value.status == 409
    assert leases.read_namespaced_lease("mirror", "default").spec.holder_identity == "b"


# --------------------------------------------------------------------------------------------- kubectl


def _kubectl(tmp_path: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(kubectl_path()), "--kubeconfig", str(tmp_path / "kubeconfig"), "--cache-dir", str(tmp_path / "cache"),
         *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip


def test_it_cordons_and_uncordons_like_a_real_cluster(
    world: tuple[SimCluster, client.ApiClient], tmp_path: Path
) -> None:
    cluster, _ = world
    assert _kubectl(tmp_path, "cordon", "node-1").stdout == "node/node-1 cordoned\n"
    assert cluster.store.get("nodes", "node-1")["spec"]["unschedulable"] is True
    assert "Ready,SchedulingDisabled" in _kubectl(tmp_path, "get", "node", "node-1").stdout
    assert _kubectl(tmp_path, "cordon", "node-1").stdout == "node/node-1 already cordoned\n"
    assert _kubectl(tmp_path, "uncordon", "node-1").stdout == "node/node-1 uncordoned\n"
    assert not cluster.store.get("nodes", "node-1")["spec"].get("unschedulable")


def test_it_drains_a_node_through_the_eviction_api(
    world: tuple[SimCluster, client.ApiClient], tmp_path: Path
) -> None:
    cluster, _ = world
    _start(cluster, _deployment("web", 3), _pdb("web", "web", minAvailable=2))
    node = _pods(cluster, "web")[0]["spec"]["nodeName"]
    result = _kubectl(
        tmp_path, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"node/{node} cordoned" and lines[-1] == f"node/{node} drained"
    assert any(line.startswith("evicting pod default/web-") for line in lines)
    settle(cluster)
    on_node = [p for p in cluster.store.list("pods") if p["spec"].get("nodeName") == node]
    assert on_node == []
    assert len(_pods(cluster, "web")) == 3


def test_it_makes_drain_retry_while_a_budget_forbids_the_eviction(
    world: tuple[SimCluster, client.ApiClient], tmp_path: Path
) -> None:
    cluster, _ = world
    _start(cluster, _deployment("web", 2), _pdb("web", "web", minAvailable=2))
    pod = _pods(cluster, "web")[0]
    node, name = pod["spec"]["nodeName"], pod["metadata"]["name"]
    result = _kubectl(
        tmp_path, "drain", node, "--ignore-daemonsets", "--pod-selector=app=web", "--timeout=7s"
    )
    assert result.returncode == 1
    assert (f'error when evicting pods/"{name}" -n "default" (will retry after 5s): Cannot evict pod as it would '
            "violate the pod's disruption budget.") in result.stderr  # fmt: skip
    assert name in {p["metadata"]["name"] for p in _pods(cluster, "web")}
    assert (
        json.loads(_kubectl(tmp_path, "get", "node", node, "-o", "json").stdout)["spec"]["unschedulable"]
        is True
    )


def test_it_binds_a_pending_pod_through_the_binding_subresource(tmp_path: Path) -> None:
    from tests.simcluster.conftest import Http

    with run_simcluster(topology="tiny", controllers=False, kubeconfig_path=tmp_path / "kc") as cluster:
        cluster.store.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                                      "spec": {"containers": [{"name": "c", "image": "x"}]}})  # fmt: skip
        http = Http(cluster.url, cluster.ssl_context())
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": "node-2"}}  # fmt: skip
        status, _, body = http.request("POST", "/api/v1/namespaces/default/pods/p/binding", binding)
        assert (status, body["status"]) == (201, "Success")
        assert cluster.store.get("pods", "p", namespace="default")["spec"]["nodeName"] == "node-2"
        status, _, body = http.request("POST", "/api/v1/namespaces/default/pods/p/binding", binding)
        assert status == 409, "a bound pod cannot be bound again"
