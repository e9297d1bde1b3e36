"""Why a pod waits, as `kubectl describe pod` tells it: the scheduler's PodScheduled=False condition, the
scheduling gates, the template claims not created yet, a waiting container's message. One table of named
cases; nothing for a pod that runs ready or has finished; the cluster's text capped."""

from __future__ import annotations

from typing import Any

import pytest

from dra.pods import WAITING_MESSAGE_MAX, WAITING_REASON_MAX, PodWaiting, pod_waiting

JSON = dict[str, Any]
READY = {"type": "Ready", "status": "True"}
NOT_READY = {"type": "Ready", "status": "False", "reason": "ContainersNotReady"}
SCHEDULED = {"type": "PodScheduled", "status": "True"}
NO_FIT = (
    "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, preemption: 0/3 nodes are "
    "available: 3 Preemption is not helpful for scheduling."
)
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def unschedulable(message: str = NO_FIT, reason: str = "Unschedulable") -> JSON:
    return {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}


def pod(
    *,
    phase: str = "Pending",
    node: str = "",
    conditions: list[JSON] | None = None,
    gates: list[str] | None = None,
    claims: list[JSON] | None = None,
    claim_statuses: list[JSON] | None = None,
    statuses: list[JSON] | None = None,
    init_statuses: list[JSON] | None = None,
) -> JSON:
    spec: JSON = {"containers": [{"name": "main"}]}
    if node:
        spec["nodeName"] = node
    if gates is not None:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if claims is not None:
        spec["resourceClaims"] = claims
    status: JSON = {"phase": phase, "conditions": conditions or []}
    if claim_statuses is not None:
        status["resourceClaimStatuses"] = claim_statuses
    if statuses is not None:
        status["containerStatuses"] = statuses
    if init_statuses is not None:
        status["initContainerStatuses"] = init_statuses
    return {"metadata": {"name": "p", "namespace": "ml"}, "spec": spec, "status": status}


def waiting(reason: str, message: str = "", name: str = "main") -> JSON:
    state: JSON = {"reason": reason}
    if message:
        state["message"] = message
    return {"name": name, "ready": False, "restartCount": 0, "state": {"waiting": state}}


def running(name: str = "main") -> JSON:
    return {"name": name, "ready": True, "restartCount": 0, "state": {"running": {}}}


TEMPLATE_GPU = {"name": "gpu", "resourceClaimTemplateName": "single-gpu"}
PULL = 'Back-off pulling image "registry.example.com/trainer:1.4"'
BACK_OFF = "back-off 5m0s restarting failed container=main pod=p_ml(1234)"

CASES: dict[str, tuple[JSON, PodWaiting | None]] = {
    # name: (pod, what pod_waiting says)
    "unschedulable: the scheduler's reason and message": (
        pod(conditions=[unschedulable()]), PodWaiting("Unschedulable", NO_FIT),
    ),
    "a PodScheduled=False condition without a reason reads Unschedulable": (
        pod(conditions=[{"type": "PodScheduled", "status": "False"}]), PodWaiting("Unschedulable", ""),
    ),
    "scheduling gated: which gates, not the condition's generic words": (
        pod(gates=["example.com/quota", "example.com/topology"],
            conditions=[unschedulable(GATED_MESSAGE, "SchedulingGated")]),
        PodWaiting("SchedulingGated",
                   "waiting for scheduling gates to be removed: example.com/quota, example.com/topology"),
    ),
    "gated before the scheduler has seen it": (
        pod(gates=["example.com/quota"]),
        PodWaiting("SchedulingGated", "waiting for scheduling gates to be removed: example.com/quota"),
    ),
    "a template's claim not created yet": (
        pod(claims=[TEMPLATE_GPU]),
        PodWaiting("WaitingForResourceClaim", "ResourceClaim not created yet for gpu (template single-gpu)"),
    ),
    "unschedulable, and a claim not created yet: both said": (
        pod(conditions=[unschedulable()], claims=[TEMPLATE_GPU, {"name": "nic", "resourceClaimTemplateName": "one-nic"}],
            claim_statuses=[{"name": "nic", "resourceClaimName": "p-nic-abcde"}]),
        PodWaiting("Unschedulable", f"{NO_FIT}; ResourceClaim not created yet for gpu (template single-gpu)"),
    ),
    "gated and its claims not created yet": (
        pod(gates=["example.com/quota"], claims=[TEMPLATE_GPU]),
        PodWaiting("SchedulingGated", "waiting for scheduling gates to be removed: example.com/quota; "
                                      "ResourceClaim not created yet for gpu (template single-gpu)"),
    ),
    "a template's claim made: nothing to wait for": (
        pod(claims=[TEMPLATE_GPU], claim_statuses=[{"name": "gpu", "resourceClaimName": "p-gpu-x7k2p"}]), None,
    ),
    "a template's claim not needed (a status entry without a name)": (
        pod(claims=[TEMPLATE_GPU], claim_statuses=[{"name": "gpu"}]), None,
    ),
    "a claim named directly is not made from a template": (
        pod(claims=[{"name": "shared", "resourceClaimName": "team-gpu"}]), None,
    ),
    "pending, not looked at yet": (pod(), None),
    "bound, its container being created: STATUS says it all": (
        pod(node="node-1", conditions=[SCHEDULED], statuses=[waiting("ContainerCreating")]), None,
    ),
    "bound, an image that cannot be pulled: the container's message": (
        pod(node="node-1", conditions=[SCHEDULED], statuses=[waiting("ImagePullBackOff", PULL)]),
        PodWaiting("ImagePullBackOff", f"container main: {PULL}"),
    ),
    "an init container waits before the containers do": (
        pod(node="node-1", conditions=[SCHEDULED], init_statuses=[waiting("ErrImagePull", "no such image", "setup")],
            statuses=[waiting("PodInitializing", "")]),
        PodWaiting("ErrImagePull", "container setup: no such image"),
    ),
    "running, not ready, crash looping: the back-off's message": (
        pod(phase="Running", node="node-1", conditions=[SCHEDULED, NOT_READY],
            statuses=[waiting("CrashLoopBackOff", BACK_OFF)]),
        PodWaiting("CrashLoopBackOff", f"container main: {BACK_OFF}"),
    ),
    "running, not ready, crash looping without a message": (
        pod(phase="Running", node="node-1", conditions=[NOT_READY], statuses=[waiting("CrashLoopBackOff")]), None,
    ),
    "running and ready": (pod(phase="Running", node="node-1", conditions=[SCHEDULED, READY], statuses=[running()]), None),
    "running and ready: a container's leftover message is no wait": (
        pod(phase="Running", node="node-1", conditions=[SCHEDULED, READY],
            statuses=[waiting("CrashLoopBackOff", BACK_OFF)]), None,
    ),
    "succeeded": (pod(phase="Succeeded", conditions=[unschedulable()], claims=[TEMPLATE_GPU]), None),
    "failed": (pod(phase="Failed", node="node-1", statuses=[waiting("ImagePullBackOff", PULL)]), None),
    "bound, its claims' statuses missing: not a claim wait": (
        pod(node="node-1", conditions=[SCHEDULED], claims=[TEMPLATE_GPU]), None,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_it_says_why_a_pod_waits_as_kubectl_describe_does(name: str) -> None:
    obj, expected = CASES[name]
    assert pod_waiting(obj) == expected


def test_it_caps_the_clusters_text() -> None:
    found = pod_waiting(pod(conditions=[unschedulable("x" * 50_000, "R" * 500)]))
    assert found is not None
    assert len(found.message) == WAITING_MESSAGE_MAX == 1000 and found.message.endswith("x…")
    assert len(found.reason) == WAITING_REASON_MAX and found.reason.endswith("R…")
    exact = pod_waiting(pod(conditions=[unschedulable("y" * WAITING_MESSAGE_MAX)]))
    assert exact is not None and exact.message == "y" * WAITING_MESSAGE_MAX


def test_it_survives_a_pod_of_the_wrong_shapes() -> None:
    odd: JSON = {
        "spec": {"schedulingGates": "soon", "resourceClaims": {"gpu": 1}},
        "status": {"phase": "Pending", "conditions": [None, 3], "containerStatuses": [{"state": None}]},
    }
    assert pod_waiting(odd) is None
    assert pod_waiting({}) is None
    assert pod_waiting({"spec": None, "status": "Pending"}) is None
