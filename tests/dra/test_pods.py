"""A pod as `kubectl get pods` prints it (upstream's printPod), and the claims and DRA extended resources it
uses: one table of named cases, the words a user sees in kubectl's STATUS column."""

from __future__ import annotations

from typing import Any

import pytest

from dra.pods import PodClaimRef, dra_extended_resources, pod_claims, pod_phase, pod_status

JSON = dict[str, Any]
READY = {"type": "Ready", "status": "True"}
INITIALIZED = {"type": "Initialized", "status": "True"}


def pod(
    *,
    phase: str = "Running",
    containers: int = 1,
    statuses: list[JSON] | None = None,
    init: list[JSON] | None = None,
    init_statuses: list[JSON] | None = None,
    conditions: list[JSON] | None = None,
    reason: str = "",
    deleting: bool = False,
) -> JSON:
    status: JSON = {"phase": phase, "conditions": conditions or []}
    if statuses is not None:
        status["containerStatuses"] = statuses
    if init_statuses is not None:
        status["initContainerStatuses"] = init_statuses
    if reason:
        status["reason"] = reason
    meta: JSON = {"name": "p", "namespace": "ml"}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-01T10:05:00Z"
    spec: JSON = {"containers": [{"name": f"c{i}"} for i in range(containers)]}
    if init is not None:
        spec["initContainers"] = init
    return {"metadata": meta, "spec": spec, "status": status}


def running(name: str = "c0", *, ready: bool = True, restarts: int = 0, **extra: Any) -> JSON:
    return {"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {}}, **extra}


def waiting(reason: str, name: str = "c0", restarts: int = 0) -> JSON:
    return {"name": name, "ready": False, "restartCount": restarts, "state": {"waiting": {"reason": reason}}}


def terminated(name: str = "c0", *, code: int = 0, reason: str = "", signal: int = 0) -> JSON:
    state: JSON = {"exitCode": code}
    if reason:
        state["reason"] = reason
    if signal:
        state["signal"] = signal
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": state}}


CASES: dict[str, tuple[JSON, str, str, int]] = {
    # name: (pod, READY, STATUS, RESTARTS)
    "pending, never scheduled": (pod(phase="Pending"), "0/1", "Pending", 0),
    "running and ready": (pod(statuses=[running()], conditions=[READY]), "1/1", "Running", 0),
    "no phase at all": (pod(phase=""), "0/1", "", 0),
    "scheduling gated": (
        pod(phase="Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]),
        "0/1", "SchedulingGated", 0,
    ),
    "container being created": (pod(phase="Pending", statuses=[waiting("ContainerCreating")]), "0/1", "ContainerCreating", 0),
    "crash looping": (pod(statuses=[waiting("CrashLoopBackOff", restarts=7)]), "0/1", "CrashLoopBackOff", 7),
    "first container's state wins": (
        pod(containers=2, statuses=[waiting("ImagePullBackOff"), running("c1")]), "1/2", "ImagePullBackOff", 0,
    ),
    "completed": (pod(phase="Succeeded", statuses=[terminated(reason="Completed")]), "0/1", "Completed", 0),
    "terminated without a reason: exit code": (pod(phase="Failed", statuses=[terminated(code=137)]), "0/1", "ExitCode:137", 0),
    "terminated by a signal": (pod(phase="Failed", statuses=[terminated(code=1, signal=9)]), "0/1", "Signal:9", 0),
    "one completed, one still running and ready": (
        pod(containers=2, statuses=[terminated(reason="Completed"), running("c1")], conditions=[READY]),
        "1/2", "Running", 0,
    ),
    "one completed, one running, pod not ready": (
        pod(containers=2, statuses=[terminated(reason="Completed"), running("c1")]), "1/2", "NotReady", 0,
    ),
    "init container running: Init:i/n": (
        pod(phase="Pending", init=[{"name": "i0"}, {"name": "i1"}],
            init_statuses=[terminated("i0"), running("i1", ready=False)], statuses=[waiting("PodInitializing")]),
        "0/1", "Init:1/2", 0,
    ),
    "init container crash looping": (
        pod(phase="Pending", init=[{"name": "i0"}], init_statuses=[waiting("CrashLoopBackOff", "i0", restarts=3)]),
        "0/1", "Init:CrashLoopBackOff", 3,
    ),
    "init container failed": (
        pod(phase="Pending", init=[{"name": "i0"}], init_statuses=[terminated("i0", code=2)]), "0/1", "Init:ExitCode:2", 0,
    ),
    "init container failed with a reason": (
        pod(phase="Pending", init=[{"name": "i0"}], init_statuses=[terminated("i0", code=1, reason="Error")]),
        "0/1", "Init:Error", 0,
    ),
    "a started sidecar counts in READY and does not hold the pod in Init": (
        pod(init=[{"name": "side", "restartPolicy": "Always"}],
            init_statuses=[running("side", restarts=2, started=True)], statuses=[running(restarts=1)],
            conditions=[INITIALIZED, READY]),
        "2/2", "Running", 3,
    ),
    "being deleted": (pod(statuses=[running()], conditions=[READY], deleting=True), "1/1", "Terminating", 0),
    "deleted after it finished: not Terminating": (
        pod(phase="Succeeded", statuses=[terminated(reason="Completed")], deleting=True), "0/1", "Completed", 0,
    ),
    "lost with its node": (pod(reason="NodeLost", deleting=True), "0/1", "Unknown", 0),
    "evicted": (pod(phase="Failed", reason="Evicted"), "0/1", "Evicted", 0),
}  # fmt: skip


@pytest.mark.parametrize(("name"), list(CASES))
def test_it_prints_a_pods_status_as_kubectl_does(name: str) -> None:
    obj, ready, status, restarts = CASES[name]
    summary = pod_status(obj)
    assert (summary.ready_text, summary.status, summary.restarts) == (ready, status, restarts)


def test_it_remembers_the_last_restart_for_kubectls_ago() -> None:
    earlier = running(
        restarts=1, lastState={"terminated": {"exitCode": 1, "finishedAt": "2026-11-01T10:00:00Z"}}
    )
    later = running(
        "c1", restarts=1, lastState={"terminated": {"exitCode": 1, "finishedAt": "2026-11-01T11:00:00Z"}}
    )
    assert pod_status(pod(containers=2, statuses=[later, earlier])).last_restart == "2026-11-01T11:00:00Z"
    assert pod_status(pod(statuses=[running()])).last_restart == ""


def test_it_survives_a_pod_of_the_wrong_shapes() -> None:
    odd = {"spec": {"containers": "none"}, "status": {"containerStatuses": [None, 3], "conditions": {}}}
    assert pod_status(odd).status == ""
    assert pod_phase(odd) == "Unknown"
    assert pod_claims({"spec": {"resourceClaims": None}}) == []


def test_it_lists_a_pods_claims_by_name_from_templates_and_the_schedulers() -> None:
    obj = {
        "spec": {
            "resourceClaims": [
                {"name": "shared", "resourceClaimName": "team-gpu"},
                {"name": "gpu", "resourceClaimTemplateName": "single-gpu"},
                {"name": "nic", "resourceClaimTemplateName": "one-nic"},
            ]
        },
        "status": {
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "trainer-0-gpu-x7k2p"}],
            "extendedResourceClaimStatus": {"resourceClaimName": "trainer-0-extended-resources-abcde"},
        },
    }
    assert pod_claims(obj) == [
        PodClaimRef("shared", "team-gpu", "claim"),
        PodClaimRef("gpu", "trainer-0-gpu-x7k2p", "template", "single-gpu"),
        PodClaimRef("nic", "", "template", "one-nic"),  # not made yet
        PodClaimRef("", "trainer-0-extended-resources-abcde", "extended"),
    ]


def test_it_names_the_extended_resources_the_scheduler_gave_to_dra_with_the_pods_count() -> None:
    obj = {
        "spec": {
            "containers": [
                {"name": "a", "resources": {"limits": {"example.com/gpu": "2", "cpu": "4"}}},
                {"name": "b", "resources": {"requests": {"example.com/gpu": "1", "example.com/fpga": "1"}}},
            ]
        },
        "status": {
            "extendedResourceClaimStatus": {
                "resourceClaimName": "p-extended-resources-abcde",
                "requestMappings": [
                    {"containerName": "a", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"},
                    {"containerName": "b", "resourceName": "example.com/gpu", "requestName": "container-1-request-1"},
                ],
            }
        },
    }  # fmt: skip
    # example.com/fpga is not mapped: a device plugin serves it, not DRA.
    assert dra_extended_resources(obj) == {"example.com/gpu": 3}
    assert dra_extended_resources({"spec": obj["spec"], "status": {}}) == {}
