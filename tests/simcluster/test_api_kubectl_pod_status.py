"""kubectl 1.37.1 reading a pod's status as a v1.37 cluster writes it: PodObservedGenerationTracking is GA and
locked on since v1.35 (pkg/features/kube_features.go), so the kubelet records `status.observedGeneration` and
the kubelet, the scheduler and the eviction API stamp every pod condition they write with the pod's
`metadata.generation` (pkg/api/v1/pod/util.go CalculatePodConditionObservedGeneration)."""

from __future__ import annotations

import json
from pathlib import Path

from simcluster.testing import SimCluster
from tests.simcluster.conftest import kubectl_out
from tests.simcluster.sim_helpers import settle


def test_a_started_pods_status_and_conditions_observe_its_generation(
    live: SimCluster, tmp_path: Path
) -> None:
    kubectl_out(tmp_path, "run", "app", "--image=registry.example.com/app:1.2")
    kubectl_out(tmp_path, "wait", "--for=condition=Ready", "pod/app", "--timeout=30s")
    settle(live)
    pod = json.loads(kubectl_out(tmp_path, "get", "pod", "app", "-o", "json"))
    assert pod["metadata"]["generation"] == 1
    assert pod["status"]["observedGeneration"] == 1
    observed = {c["type"]: c.get("observedGeneration") for c in pod["status"]["conditions"]}
    assert observed == {
        "PodScheduled": 1, "Initialized": 1, "PodReadyToStartContainers": 1, "ContainersReady": 1, "Ready": 1,
    }  # fmt: skip
    # what `kubectl wait` users poll for: the kubelet has seen the pod's current spec
    waited = kubectl_out(
        tmp_path, "wait", "--for=jsonpath={.status.observedGeneration}=1", "pod/app", "--timeout=10s"
    )
    assert waited == "pod/app condition met\n"


def test_the_schedulers_unschedulable_condition_observes_the_pods_generation(
    live: SimCluster, tmp_path: Path
) -> None:
    kubectl_out(tmp_path, "run", "nowhere", "--image=registry.example.com/app:1.2",
         "--overrides", '{"spec":{"nodeSelector":{"no-such-label":"x"}}}')  # fmt: skip
    settle(live)
    condition = json.loads(
        kubectl_out(
            tmp_path,
            "get",
            "pod",
            "nowhere",
            "-o",
            'jsonpath={.status.conditions[?(@.type=="PodScheduled")]}',
        )
    )
    assert (condition["status"], condition["reason"], condition["observedGeneration"]) == (
        "False", "Unschedulable", 1,
    )  # fmt: skip
