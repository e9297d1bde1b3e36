"""A ReplicaSet or Job whose pod the API server refuses (here: its ServiceAccount does not exist), as the
ReplicaSet and Job controllers of kube-controller-manager handle it: a FailedCreate event, the ReplicaSet's
ReplicaFailure condition, a wait before the next try, and the pods once the cause is gone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from simcluster.controllers.base import FakeClock
from simcluster.testing import SimCluster
from tests.simcluster.sim_helpers import running, settle

JSON = dict[str, Any]
REFUSAL = 'error looking up service account default/builder: serviceaccount "builder" not found'


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[SimCluster, FakeClock, client.ApiClient]]:
    with running(topology=None, kubeconfig_path=tmp_path / "kubeconfig") as (cluster, _, clock):
        api = config.new_client_from_config(str(tmp_path / "kubeconfig"))
        try:
            yield cluster, clock, api
        finally:
            api.close()


def _template(name: str, restart_policy: str = "Never") -> JSON:
    return {"metadata": {"labels": {"app": name}},
            "spec": {"serviceAccountName": "builder", "restartPolicy": restart_policy,
                     "containers": [{"name": "c", "image": "registry.example.com/build:1"}]}}  # fmt: skip


def _events(api: client.ApiClient, name: str) -> list[client.CoreV1Event]:
    found = client.CoreV1Api(api).list_namespaced_event("default").items
    return [e for e in found if e.involved_object.name == name and e.reason == "FailedCreate"]


def _pods(api: client.ApiClient, name: str) -> list[client.V1Pod]:
    return client.CoreV1Api(api).list_namespaced_pod("default", label_selector=f"app={name}").items


def test_a_replicaset_whose_pod_is_refused_records_why_waits_and_recovers(
    live: tuple[SimCluster, FakeClock, client.ApiClient],
) -> None:
    cluster, clock, api = live
    apps = client.AppsV1Api(api)
    apps.create_namespaced_replica_set("default", {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "build"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "build"}}, "template": _template("build", "Always")},
    })  # fmt: skip
    settle(cluster)
    (event,) = _events(api, "build")
    assert (event.type, event.source.component, event.involved_object.kind) == (
        "Warning", "replicaset-controller", "ReplicaSet",
    )  # fmt: skip
    assert event.message == f'Error creating: pods "build-" is forbidden: {REFUSAL}'
    status = apps.read_namespaced_replica_set("build", "default").status
    assert status.replicas == 0
    (condition,) = status.conditions
    assert (condition.type, condition.status, condition.reason) == ("ReplicaFailure", "True", "FailedCreate")
    assert condition.message == f'pods "build-" is forbidden: {REFUSAL}'
    assert cluster.controllers.errors() == {}

    # no second try before the wait is over, then one more refusal: the same event counted again, as
    # client-go's event correlator does (kubectl describe: "(x2 over 2s)")
    settle(cluster)
    assert [e.count for e in _events(api, "build")] == [1]
    clock.advance(1.5)
    settle(cluster)
    (again,) = _events(api, "build")
    assert (again.metadata.name, again.count) == (event.metadata.name, 2)
    assert again.last_timestamp > again.first_timestamp

    client.CoreV1Api(api).create_namespaced_service_account("default", {"metadata": {"name": "builder"}})
    clock.advance(2.5)  # the doubled wait
    settle(cluster)
    assert len(_pods(api, "build")) == 2
    status = apps.read_namespaced_replica_set("build", "default").status
    assert status.conditions is None
    assert [e.count for e in _events(api, "build")] == [2]


def test_a_job_whose_pod_is_refused_records_why_and_counts_no_active_pod(
    live: tuple[SimCluster, FakeClock, client.ApiClient],
) -> None:
    cluster, _clock, api = live
    client.BatchV1Api(api).create_namespaced_job("default", {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
        "spec": {"template": _template("once")},
    })  # fmt: skip
    settle(cluster)
    (event,) = _events(api, "once")
    assert (event.type, event.source.component) == ("Warning", "job-controller")
    assert event.message == f'Error creating: pods "once-" is forbidden: {REFUSAL}'
    assert client.BatchV1Api(api).read_namespaced_job("once", "default").status.active is None
    assert _pods(api, "once") == []
