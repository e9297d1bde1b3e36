"""Cascading deletion through the official Python client: the API server's garbage-collection finalizers
(`foregroundDeletion`, `orphan`) and the garbage collector that acts on them and on ownerReferences."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from simcluster.testing import SimCluster
from tests.simcluster.conftest import raw_json
from tests.simcluster.sim_helpers import running, settle

JSON = dict[str, Any]
HOLD = "example.com/hold"


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[SimCluster, client.ApiClient]]:
    """The tiny topology with every controller running, and the official client on it."""
    with running(kubeconfig_path=tmp_path / "kubeconfig") as (cluster, _, _):
        api = config.new_client_from_config(str(tmp_path / "kubeconfig"))
        try:
            yield cluster, api
        finally:
            api.close()


@pytest.fixture
def bare(tmp_path: Path) -> Iterator[tuple[SimCluster, client.ApiClient]]:
    """No topology, but the controllers (the garbage collector among them) running."""
    with running(topology=None, kubeconfig_path=tmp_path / "kubeconfig") as (cluster, _, _):
        api = config.new_client_from_config(str(tmp_path / "kubeconfig"))
        try:
            yield cluster, api
        finally:
            api.close()


def _replicaset(name: str, replicas: int) -> JSON:
    return {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}},
    }  # fmt: skip


def _deployment(name: str, replicas: int) -> JSON:
    return {**_replicaset(name, replicas), "kind": "Deployment"}


def _owned_pods(cluster: SimCluster, owner: JSON) -> list[JSON]:
    uid = owner["metadata"]["uid"]
    return [
        p
        for p in cluster.store.list("pods", namespace=owner["metadata"]["namespace"])
        if any(ref["uid"] == uid for ref in p["metadata"].get("ownerReferences", []))
    ]


def _hold(api: client.ApiClient, pod: JSON) -> None:
    """A finalizer of someone else's keeps the pod after its deletion, until `_release`."""
    body = {"metadata": {"finalizers": [HOLD]}}
    client.CoreV1Api(api).patch_namespaced_pod(pod["metadata"]["name"], "default", body)


def _release(api: client.ApiClient, pod: JSON) -> None:
    body = [{"op": "remove", "path": "/metadata/finalizers"}]
    client.CoreV1Api(api).patch_namespaced_pod(pod["metadata"]["name"], "default", body)


def _delete_rs(api: client.ApiClient, name: str, policy: str | None) -> tuple[int, JSON]:
    response = client.AppsV1Api(api).delete_namespaced_replica_set(
        name, "default", propagation_policy=policy, _preload_content=False
    )
    return response.status, raw_json(response)


def _exists(cluster: SimCluster, plural: str, name: str, namespace: str = "default") -> bool:
    return any(o["metadata"]["name"] == name for o in cluster.store.list(plural, namespace=namespace))


def test_it_keeps_a_replicaset_deleted_in_the_foreground_until_its_pods_are_gone(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    client.AppsV1Api(api).create_namespaced_replica_set("default", _replicaset("web", 2))
    settle(cluster)
    rs = cluster.store.get("replicasets", "web", namespace="default")
    held, other = sorted(_owned_pods(cluster, rs), key=lambda p: p["metadata"]["name"])
    _hold(api, held)

    status, answered = _delete_rs(api, "web", "Foreground")

    # 200 with the ReplicaSet marked (not a Status): deleted now, held by the collector's finalizer
    assert status == 200
    assert answered["kind"] == "ReplicaSet"
    marked = answered["metadata"]
    assert marked["finalizers"] == ["foregroundDeletion"]
    assert marked["deletionTimestamp"] and marked["deletionGracePeriodSeconds"] == 0
    assert marked["generation"] == rs["metadata"]["generation"] + 1
    settle(cluster)
    # the collector deleted both pods; one is held, so the ReplicaSet waits, and makes no new pod
    assert cluster.store.get("replicasets", "web", namespace="default")["metadata"]["finalizers"] == [
        "foregroundDeletion"
    ]
    (left,) = _owned_pods(cluster, rs)
    assert left["metadata"]["name"] == held["metadata"]["name"]
    assert left["metadata"]["deletionTimestamp"]
    assert left["status"]["phase"] == "Failed"  # the kubelet stopped it
    assert not _exists(cluster, "pods", other["metadata"]["name"])
    # deleting it again changes nothing
    before = _current_rv(cluster, "web")
    again_status, again = _delete_rs(api, "web", "Foreground")
    assert (again_status, again["metadata"]["resourceVersion"]) == (200, before)
    assert _current_rv(cluster, "web") == before

    _release(api, left)
    settle(cluster)

    assert not _exists(cluster, "replicasets", "web")
    assert _owned_pods(cluster, rs) == []


def _current_rv(cluster: SimCluster, name: str) -> str:
    return str(cluster.store.get("replicasets", name, namespace="default")["metadata"]["resourceVersion"])


def test_it_deletes_a_deployment_in_the_foreground_after_its_replicaset_and_its_pods(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    apps = client.AppsV1Api(api)
    apps.create_namespaced_deployment("default", _deployment("web", 1))
    settle(cluster)
    (rs,) = cluster.store.list("replicasets", namespace="default")
    (pod,) = _owned_pods(cluster, rs)
    _hold(api, pod)

    apps.delete_namespaced_deployment("web", "default", propagation_policy="Foreground")
    settle(cluster)

    # the ReplicaSet has dependents of its own: the collector deleted it in the foreground too
    deployment = cluster.store.get("deployments", "web", namespace="default")
    replicaset = cluster.store.get("replicasets", rs["metadata"]["name"], namespace="default")
    for owner in (deployment, replicaset):
        assert owner["metadata"]["deletionTimestamp"]
        assert owner["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert [p["metadata"]["name"] for p in _owned_pods(cluster, rs)] == [pod["metadata"]["name"]]

    _release(api, pod)
    settle(cluster)

    assert cluster.store.list("deployments", namespace="default") == []
    assert cluster.store.list("replicasets", namespace="default") == []
    assert _owned_pods(cluster, rs) == []


def test_it_finishes_a_foreground_deletion_once_the_pods_released_their_claims(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    trainer = cluster.store.get("replicasets", "trainer", namespace="ml")
    claims = cluster.store.list("resourceclaims", namespace="ml")
    assert len(claims) == 2 and all(c["status"].get("allocation") for c in claims)
    gone: list[str] = []
    cluster.store.subscribe(
        lambda event, plural, obj: gone.append(plural) if event == "DELETED" and plural != "events" else None
    )

    client.AppsV1Api(api).delete_namespaced_replica_set("trainer", "ml", propagation_policy="Foreground")
    settle(cluster)

    # each pod waited, in the foreground, for its claim, which its release let go once the kubelet stopped
    # the pod; the ReplicaSet went last
    assert sorted(gone[:-1]) == ["pods", "pods", "resourceclaims", "resourceclaims"]
    assert gone[-1] == "replicasets"
    assert _owned_pods(cluster, trainer) == []
    assert cluster.store.list("resourceclaims", namespace="ml") == []


def test_it_orphans_the_pods_of_a_replicaset_through_the_orphan_finalizer(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    client.AppsV1Api(api).create_namespaced_replica_set("default", _replicaset("web", 2))
    settle(cluster)
    rs = cluster.store.get("replicasets", "web", namespace="default")
    pods = {p["metadata"]["name"] for p in _owned_pods(cluster, rs)}

    status, answered = _delete_rs(api, "web", "Orphan")
    assert status == 200
    assert answered["metadata"]["finalizers"] == ["orphan"] and answered["metadata"]["deletionTimestamp"]
    settle(cluster)

    assert not _exists(cluster, "replicasets", "web")
    left = {p["metadata"]["name"]: p for p in cluster.store.list("pods", namespace="default")}
    assert pods <= set(left)
    assert all("ownerReferences" not in left[name]["metadata"] for name in pods)


JOB: JSON = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "burn-in", "namespace": "default"},
    "spec": {"template": {"spec": {"restartPolicy": "Never",
                                   "containers": [{"name": "burn", "image": "registry.example.com/burn:1"}]}}},
}  # fmt: skip


def test_it_orphans_a_jobs_pods_when_the_delete_names_no_policy(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    batch = client.BatchV1Api(api)
    batch.create_namespaced_job("default", JOB)
    settle(cluster)
    job = cluster.store.get("jobs", "burn-in", namespace="default")
    (pod,) = _owned_pods(cluster, job)

    answered = raw_json(batch.delete_namespaced_job("burn-in", "default", _preload_content=False))
    assert answered["metadata"]["finalizers"] == ["orphan"]  # batch/v1's default, kept for old clients
    settle(cluster)

    assert not _exists(cluster, "jobs", "burn-in")
    kept = cluster.store.get("pods", pod["metadata"]["name"], namespace="default")
    assert "ownerReferences" not in kept["metadata"]


def test_it_deletes_a_jobs_pods_and_their_claims_in_the_background(
    live: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = live
    job = cluster.store.get("jobs", "mig-inference", namespace="research")
    assert _owned_pods(cluster, job)

    client.BatchV1Api(api).delete_namespaced_job("mig-inference", "research", propagation_policy="Background")
    settle(cluster)

    assert _owned_pods(cluster, job) == []
    assert not any(
        c["metadata"]["name"].startswith("mig-inference-")
        for c in cluster.store.list("resourceclaims", namespace="research")
    )


def test_it_streams_the_owner_marked_then_deleted(live: tuple[SimCluster, client.ApiClient]) -> None:
    cluster, api = live
    apps = client.AppsV1Api(api)
    apps.create_namespaced_replica_set("default", _replicaset("web", 1))
    settle(cluster)
    since = _current_rv(cluster, "web")

    apps.delete_namespaced_replica_set("web", "default", propagation_policy="Foreground")
    settle(cluster)

    seen = [
        (event["type"], event["raw_object"]["metadata"])
        for event in watch.Watch().stream(
            apps.list_namespaced_replica_set, "default", resource_version=since, timeout_seconds=1
        )
    ]
    assert [kind for kind, _ in seen] == ["MODIFIED", "DELETED"]
    assert seen[0][1]["finalizers"] == ["foregroundDeletion"] and seen[0][1]["deletionTimestamp"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"propagation_policy": "Sideways"}, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: '
         'Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"'),
        ({"propagation_policy": "Orphan", "orphan_dependents": True}, 'DeleteOptions.meta.k8s.io "" is invalid: '
         'propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set'),
    ],
)  # fmt: skip
def test_it_refuses_delete_options_upstream_refuses(
    api: client.ApiClient, options: JSON, message: str
) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map("default", {"metadata": {"name": "settings"}})
    with pytest.raises(ApiException) as refused:
        core.delete_namespaced_config_map("settings", "default", **options)
    assert refused.value.status == 422
    assert json.loads(refused.value.body)["message"] == message
    assert core.read_namespaced_config_map("settings", "default").metadata.deletion_timestamp is None


def _config_map(name: str, owners: list[JSON]) -> JSON:
    refs = [{"apiVersion": o.get("apiVersion", "v1"), "kind": o.get("kind", "ConfigMap"), "name": o["metadata"]["name"],
             "uid": o["metadata"]["uid"]} for o in owners]  # fmt: skip
    return {"metadata": {"name": name, "ownerReferences": refs}}


def test_it_drops_a_deleted_owner_from_a_dependent_that_has_another(
    bare: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = bare
    core = client.CoreV1Api(api)
    first = core.create_namespaced_config_map("default", {"metadata": {"name": "first"}}).to_dict()
    second = core.create_namespaced_config_map("default", {"metadata": {"name": "second"}}).to_dict()
    owners = [{"metadata": o["metadata"]} for o in (first, second)]
    core.create_namespaced_config_map("default", _config_map("shared", owners))
    core.create_namespaced_config_map("default", _config_map("only-first", owners[:1]))
    settle(cluster)

    core.delete_namespaced_config_map("first", "default")
    settle(cluster)

    assert not _exists(cluster, "configmaps", "only-first")
    shared = cluster.store.get("configmaps", "shared", namespace="default")
    assert [ref["name"] for ref in shared["metadata"]["ownerReferences"]] == ["second"]


def test_it_collects_an_object_created_with_an_owner_that_does_not_exist(
    bare: tuple[SimCluster, client.ApiClient],
) -> None:
    cluster, api = bare
    core = client.CoreV1Api(api)
    ghost = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "ghost", "uid": str(uuid.uuid4())},
    }
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "uid": str(uuid.uuid4())},
    }
    core.create_namespaced_config_map("default", _config_map("haunted", [ghost]))
    core.create_namespaced_config_map("default", _config_map("unknowable", [widget]))
    settle(cluster)

    # the owner's kind is served and it is not there: garbage; a kind the server does not serve: left alone
    assert not _exists(cluster, "configmaps", "haunted")
    assert _exists(cluster, "configmaps", "unknowable")
