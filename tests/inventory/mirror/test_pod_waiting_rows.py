"""Why a pod waits reaches its Pod row from a cluster: simcluster's scheduler writes PodScheduled=False in
kube-scheduler's words for a pod it cannot place, and the mirror keeps that reason and message (and, for a
gated pod, its gates and the template claims not created yet) for the Pods list and /api/pods/."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.kube import connect
from inventory.mirror.runner import Mirror
from inventory.models import Pod
from tests.inventory.mirror.helpers import wait_until

pytestmark = pytest.mark.django_db

GATED = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "gated", "namespace": "ml"},
    "spec": {
        "schedulingGates": [{"name": "example.com/quota"}],
        "containers": [{"name": "main", "image": "registry.example.com/trainer:1.4"}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
    },
}


def test_the_schedulers_refusal_and_a_gated_pods_gates_reach_the_pod_rows(simcluster: Any) -> None:
    simcluster.store.create("pods", GATED, namespace="ml")
    assert simcluster.controllers.wait_idle(60)
    mirror = Mirror(connect(str(simcluster.kubeconfig_path)))

    def mirrored() -> bool:
        mirror.sync_once()
        return Pod.objects.filter(name__in=["too-big", "gated"]).exclude(waiting_reason="").count() == 2

    wait_until(mirrored, what="the waiting pods mirrored")

    # tiny's too-big asks for 8 GPUs on one node: no node has them.
    scheduled = next(
        c
        for c in simcluster.store.get("pods", "too-big", namespace="research")["status"]["conditions"]
        if c["type"] == "PodScheduled"
    )
    too_big = Pod.objects.get(namespace="research", name="too-big")
    assert (too_big.status, too_big.waiting_reason) == ("Pending", "Unschedulable")
    assert too_big.waiting_message == scheduled["message"]
    assert too_big.waiting_message.startswith("0/3 nodes are available: 3 cannot allocate all claims.")

    gated = Pod.objects.get(namespace="ml", name="gated")
    assert (gated.status, gated.waiting_reason) == ("SchedulingGated", "SchedulingGated")
    assert gated.waiting_message == (
        "waiting for scheduling gates to be removed: example.com/quota; "
        "ResourceClaim not created yet for gpu (template single-gpu)"
    )
    # The running trainers wait for nothing.
    assert set(
        Pod.objects.filter(namespace="ml", name__startswith="trainer-").values_list(
            "waiting_reason", flat=True
        )
    ) == {""}
