"""Pods, owners and pool summaries around the scheduler: gates, Jobs, ResourcePoolStatusRequests."""

from __future__ import annotations

from simcluster.controllers import FakeClock
from simcluster.controllers.pods import PodLifecycle
from simcluster.controllers.scheduler import Scheduler
from simcluster.store import Store
from tests.simcluster.sim_helpers import JSON, condition, pods, running, settle, template_pod


def test_it_keeps_a_gated_pod_pending_until_its_gates_are_removed() -> None:
    with running() as (cluster, _, _):
        pod = template_pod("gated", "single-gpu")
        pod["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
        cluster.store.create("pods", pod)
        settle(cluster)

        gated = cluster.store.get("pods", "gated", namespace="ml")
        assert "nodeName" not in gated["spec"]
        assert condition(gated, "PodScheduled")["reason"] == "SchedulingGated"  # type: ignore[index]

        gated["spec"]["schedulingGates"] = []
        cluster.store.update("pods", gated)
        settle(cluster)
        assert cluster.store.get("pods", "gated", namespace="ml")["status"]["phase"] == "Running"


def test_it_replaces_a_job_pod_that_disappears_until_the_job_has_its_completions() -> None:
    with running() as (cluster, _, _):
        (first,) = pods(cluster, app="mig-inference")
        cluster.store.delete("pods", first["metadata"]["name"], namespace="research")
        settle(cluster)

        (second,) = pods(cluster, app="mig-inference")
        assert second["metadata"]["uid"] != first["metadata"]["uid"]
        assert second["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "mig-inference"
        assert second["status"]["phase"] == "Running"

        cluster.store.patch(
            "pods",
            second["metadata"]["name"],
            {"status": {"phase": "Succeeded"}},
            namespace="research",
            subresource="status",
        )
        settle(cluster)
        job = cluster.store.get("jobs", "mig-inference", namespace="research")
        assert job["status"]["succeeded"] == 1
        # zero counts are omitempty, as kubectl get job -o yaml shows on a real server
        assert "active" not in job["status"] and "failed" not in job["status"]
        assert job["status"]["ready"] == 0
        assert [p["status"]["phase"] for p in pods(cluster, app="mig-inference")] == ["Succeeded"]


def test_it_answers_a_resource_pool_status_request_once_with_device_counts() -> None:
    with running() as (cluster, controllers, _):
        controllers.driver.mark_unhealthy("gpu.example.com", "node-0", "gpu-3", effect="NoSchedule")
        cluster.store.create(
            "resourcepoolstatusrequests",
            {
                "apiVersion": "resource.k8s.io/v1alpha3",
                "kind": "ResourcePoolStatusRequest",
                "metadata": {"name": "gpus"},
                "spec": {"driver": "gpu.example.com"},
            },
        )
        settle(cluster)

        status = cluster.store.get("resourcepoolstatusrequests", "gpus")["status"]
        assert status["poolCount"] == 3
        assert [p["poolName"] for p in status["pools"]] == ["node-0", "node-1", "node-2"]
        node0 = status["pools"][0]
        assert node0["totalDevices"] == 4 and node0["unavailableDevices"] == 1
        assert node0["availableDevices"] == 4 - node0["allocatedDevices"] - 1
        assert status["conditions"][0]["type"] == "Complete"


def test_it_reports_an_invalid_pool_instead_of_counting_its_devices() -> None:
    with running() as (cluster, _, _):
        for name in ("dup-a", "dup-b"):  # one pool in two slices, both with a device called gpu-0
            cluster.store.create(
                "resourceslices",
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": name},
                    "spec": {
                        "driver": "dup.example.com",
                        "pool": {"name": "shared", "generation": 1, "resourceSliceCount": 2},
                        "allNodes": True,
                        "devices": [{"name": "gpu-0"}],
                    },
                },
            )
        cluster.store.create(
            "resourcepoolstatusrequests",
            {
                "apiVersion": "resource.k8s.io/v1alpha3",
                "kind": "ResourcePoolStatusRequest",
                "metadata": {"name": "dup"},
                "spec": {"driver": "dup.example.com"},
            },
        )
        settle(cluster)

        (pool,) = cluster.store.get("resourcepoolstatusrequests", "dup")["status"]["pools"]
        assert pool["validationError"] == "invalid pool: duplicate device name gpu-0"
        assert "totalDevices" not in pool


def test_it_finishes_a_graceful_pod_deletion_like_a_kubelet() -> None:
    store = Store(graceful_pod_deletion=True)
    lifecycle = PodLifecycle(store, clock=FakeClock())
    pod = template_pod("bound", "none", namespace="default")
    del pod["spec"]["resourceClaims"], pod["spec"]["containers"][0]["resources"]
    pod["spec"]["nodeName"] = "node-0"
    store.create("pods", pod)
    lifecycle.reconcile()
    assert store.get("pods", "bound", namespace="default")["status"]["phase"] == "Running"

    store.delete("pods", "bound", namespace="default")
    assert store.get("pods", "bound", namespace="default")["metadata"]["deletionTimestamp"]
    lifecycle.reconcile()

    assert [p["metadata"]["name"] for p in store.list("pods", namespace="default")] == []


def test_it_completes_a_pod_on_command_and_releases_its_claim() -> None:
    with running() as (cluster, controllers, _):
        (pod,) = pods(cluster, app="mig-inference")
        controllers.pods.complete("research", pod["metadata"]["name"])
        settle(cluster)

        done = cluster.store.get("pods", pod["metadata"]["name"], namespace="research")
        assert done["status"]["phase"] == "Succeeded"
        assert condition(done, "Ready")["reason"] == "PodCompleted"  # type: ignore[index]
        claim_name = done["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
        # A finished pod's generated claim is released and deleted, as for a deleted pod.
        assert claim_name not in {c["metadata"]["name"] for c in cluster.store.list("resourceclaims")}


def _pod(name: str, *, priority: int | None = None) -> JSON:
    spec: JSON = {"containers": [{"name": "main", "image": "registry.example.com/x:1"}]}
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _one_pod_node() -> Store:
    store = Store()  # it has the default namespace
    node: JSON = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "only"},
        "status": {
            "allocatable": {"cpu": "8", "memory": "1Gi", "pods": "1"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    store.create("nodes", node)
    return store


def _bound(store: Store) -> list[str]:
    return [
        p["metadata"]["name"] for p in store.list("pods", namespace="default") if p["spec"].get("nodeName")
    ]


def test_it_schedules_pods_in_the_order_they_arrived_not_by_name() -> None:
    """kube-scheduler's queue: pods created in one second are taken in arrival order, so which one gets the
    node's only pod slot does not depend on generated names."""
    store = _one_pod_node()
    scheduler = Scheduler(store, clock=FakeClock())
    for name in ("zz-first", "mm-second", "aa-third"):
        store.create("pods", _pod(name))
    scheduler.reconcile()
    assert _bound(store) == ["zz-first"]

    # a pod that arrives later queues behind the ones already waiting, whatever its name
    store.delete("pods", "zz-first", namespace="default")
    store.create("pods", _pod("a-late"))
    scheduler.reconcile()
    assert _bound(store) == ["mm-second"]


def test_it_schedules_a_higher_priority_pod_first() -> None:
    store = _one_pod_node()
    scheduler = Scheduler(store, clock=FakeClock())
    store.create("pods", _pod("ordinary"))
    store.create("pods", _pod("urgent", priority=1000))
    scheduler.reconcile()
    assert _bound(store) == ["urgent"]
