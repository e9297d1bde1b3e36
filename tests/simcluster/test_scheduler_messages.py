"""What the scheduler says when no node takes a pod, in kube-scheduler's words: the FitError's reason
histogram (`<count> <reason>`, sorted as strings), then what the PostFilter plugins said — DynamicResources
first, then DefaultPreemption (`preemption: 0/N nodes are available: …`) — on the PodScheduled condition and
the FailedScheduling event alike."""

from __future__ import annotations

from simcluster.testing import SimCluster
from tests.simcluster.sim_helpers import JSON, condition, running, settle

FPGA = "example.com/fpga"  # a device plugin's resource: no DeviceClass maps it to DRA


def _advertise_fpga(cluster: SimCluster, count: str = "1") -> None:
    for node in cluster.store.list("nodes"):
        allocatable = {**node["status"]["allocatable"], FPGA: count}
        cluster.store.patch(
            "nodes", node["metadata"]["name"], {"status": {"allocatable": allocatable}}, subresource="status"
        )


def _fpga_pod(name: str, *, fpgas: int = 1, priority: int = 0, **spec: object) -> JSON:
    resources = {"limits": {FPGA: str(fpgas)}} if fpgas else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"priority": priority, **spec,
                 "containers": [{"name": "main", "image": "registry.example.com/x:1", "resources": resources}]},
    }  # fmt: skip


def _refusal(cluster: SimCluster, name: str) -> str:
    """The PodScheduled message, after checking the FailedScheduling event says the same."""
    pod = cluster.store.get("pods", name, namespace="default")
    scheduled = condition(pod, "PodScheduled")
    assert scheduled is not None and (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
    events = [e for e in cluster.store.list("events", namespace="default")
              if e["involvedObject"]["name"] == name and e["reason"] == "FailedScheduling"]  # fmt: skip
    assert events and events[-1]["message"] == scheduled["message"]
    assert (events[-1]["type"], events[-1]["source"]) == ("Warning", {"component": "default-scheduler"})
    return str(scheduled["message"])


def _fill(cluster: SimCluster, *, priority: int = 0) -> None:
    for i in range(3):
        cluster.store.create("pods", _fpga_pod(f"holder-{i}", priority=priority))
    settle(cluster)
    assert all(p["spec"].get("nodeName") for p in cluster.store.list("pods", namespace="default"))


def test_it_says_no_preemption_victims_were_found_when_every_node_is_full_of_pods_as_important() -> None:
    with running() as (cluster, _, _):
        _advertise_fpga(cluster)
        _fill(cluster)
        cluster.store.create("pods", _fpga_pod("late"))
        settle(cluster)
        assert _refusal(cluster, "late") == (
            f"0/3 nodes are available: 3 Insufficient {FPGA}. no new claims to deallocate, "
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        )


def test_it_sorts_the_reasons_as_strings_and_says_preemption_cannot_help_where_a_filter_is_final() -> None:
    with running() as (cluster, _, _):
        _advertise_fpga(cluster)
        _fill(cluster)
        cluster.store.patch("nodes", "node-0", {"spec": {"unschedulable": True}})
        taint = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
        cluster.store.patch("nodes", "node-1", {"spec": {"taints": [taint]}})
        cluster.store.create("pods", _fpga_pod("late"))
        settle(cluster)
        assert _refusal(cluster, "late") == (
            f"0/3 nodes are available: 1 Insufficient {FPGA}, 1 node(s) had untolerated taint(s), "
            "1 node(s) were unschedulable. no new claims to deallocate, preemption: 0/3 nodes are available: "
            "1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
        )


def test_it_says_what_still_misses_when_the_pods_it_could_preempt_would_not_free_enough() -> None:
    with running() as (cluster, _, _):
        _advertise_fpga(cluster)
        _fill(cluster)
        # a less important pod on node-0 holds no FPGA: preempting it would not help
        cluster.store.create("pods", _fpga_pod("bystander", fpgas=0, priority=-1, nodeName="node-0"))
        cluster.store.create("pods", _fpga_pod("late"))
        settle(cluster)
        assert _refusal(cluster, "late") == (
            f"0/3 nodes are available: 3 Insufficient {FPGA}. no new claims to deallocate, "
            f"preemption: 0/3 nodes are available: 1 Insufficient {FPGA}, "
            "2 No preemption victims found for incoming pod."
        )


def test_it_says_a_pod_that_may_not_preempt_is_not_eligible() -> None:
    with running() as (cluster, _, _):
        _advertise_fpga(cluster)
        _fill(cluster)
        cluster.store.create("pods", _fpga_pod("polite", priority=10, preemptionPolicy="Never"))
        settle(cluster)
        assert _refusal(cluster, "polite") == (
            f"0/3 nodes are available: 3 Insufficient {FPGA}. no new claims to deallocate, "
            "preemption: not eligible due to preemptionPolicy=Never."
        )


def test_it_says_only_that_there_are_no_nodes_in_a_cluster_without_any() -> None:
    with running(topology=None) as (cluster, _, _):
        cluster.store.create("pods", _fpga_pod("alone", fpgas=0))
        settle(cluster)
        assert _refusal(cluster, "alone") == "no nodes available to schedule pods"
