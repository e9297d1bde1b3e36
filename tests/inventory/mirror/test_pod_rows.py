"""The mirror keeps one Pod row per pod (the Pods list reads them, never the pods' JSON): written with the pod,
rewritten when it changes, gone when the pod is deleted or a re-list no longer has it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from inventory.mirror.writer import BatchWriter, Event
from inventory.models import Pod
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db

JSON = dict[str, Any]


def pod(name: str, *, namespace: str = "ml", node: str = "", **status: Any) -> JSON:
    spec: JSON = {"containers": [{"name": "main"}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": f.meta(name, namespace=namespace),
        "spec": spec,
        "status": {"phase": "Pending", **status},
    }


def test_it_writes_a_pod_row_with_kubectls_status_and_the_claims_it_uses() -> None:
    trainer = pod("trainer-0", node="node-1", phase="Running")
    trainer["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}]
    trainer["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "trainer-0-gpu-x7k2p"}]
    trainer["status"]["containerStatuses"] = [
        {
            "name": "main",
            "ready": False,
            "restartCount": 4,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        }
    ]
    f.write(("pods", trainer), ("pods", pod("web", namespace="default")))

    row = Pod.objects.get(namespace="ml", name="trainer-0")
    assert (row.node_name, row.phase, row.status, row.ready, row.restarts) == (
        "node-1", "Running", "CrashLoopBackOff", "0/1", 4,
    )  # fmt: skip
    assert row.claims == [
        {"podClaim": "gpu", "name": "trainer-0-gpu-x7k2p", "source": "template", "template": "single-gpu"}
    ]
    assert row.claim_count == 1 and row.created == "2026-11-01T10:00:00Z"
    web = Pod.objects.get(name="web")
    assert (web.node_name, web.status, web.claim_count, web.claims) == ("", "Pending", 0, [])


def test_it_rewrites_the_row_when_the_pod_changes_and_drops_it_when_the_pod_goes() -> None:
    obj = pod("trainer-0")
    f.write(("pods", obj))
    bound = copy.deepcopy(obj)
    bound["metadata"]["resourceVersion"] = "2"
    bound["spec"]["nodeName"] = "node-2"
    bound["status"] = {
        "phase": "Running",
        "extendedResourceClaimStatus": {"resourceClaimName": "trainer-0-er"},
    }
    BatchWriter().apply([Event("pods", "MODIFIED", bound, "2")])
    row = Pod.objects.get(name="trainer-0")
    assert (row.node_name, row.status, row.claim_count) == ("node-2", "Running", 1)
    assert Pod.objects.count() == 1

    f.delete("pods", bound)
    assert not Pod.objects.exists()


def test_a_relist_drops_the_rows_of_pods_the_cluster_no_longer_has() -> None:
    kept, gone = pod("kept"), pod("gone")
    f.write(("pods", kept), ("pods", gone))
    f.replace("pods", [kept])
    assert list(Pod.objects.values_list("name", flat=True)) == ["kept"]


def test_a_pod_with_an_overlong_status_reason_is_cut_not_refused() -> None:
    """A container's waiting reason is free text: it must not fail the mirror's transaction (PostgreSQL
    refuses a value longer than its column)."""
    odd = pod("odd", phase="Pending" * 10)
    odd["status"]["containerStatuses"] = [{"name": "main", "state": {"waiting": {"reason": "R" * 500}}}]
    f.write(("pods", odd))
    row = Pod.objects.get(name="odd")
    assert row.status == "R" * 128 and len(row.phase) == 16


def test_it_writes_why_a_pending_pod_waits_and_forgets_it_once_the_pod_runs() -> None:
    message = "0/3 nodes are available: 3 cannot allocate all claims. " + "x" * 5_000
    waiting = pod("too-big", conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}])  # fmt: skip
    f.write(("pods", waiting))
    row = Pod.objects.get(name="too-big")
    assert row.waiting_reason == "Unschedulable"
    assert row.waiting_message.startswith("0/3 nodes are available: 3 cannot allocate all claims. xxx")
    assert len(row.waiting_message) == 1000 and row.waiting_message.endswith("…")

    placed = copy.deepcopy(waiting)
    placed["metadata"]["resourceVersion"] = "2"
    placed["spec"]["nodeName"] = "node-1"
    placed["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    BatchWriter().apply([Event("pods", "MODIFIED", placed, "2")])
    row = Pod.objects.get(name="too-big")
    assert (row.status, row.waiting_reason, row.waiting_message) == ("Running", "", "")
