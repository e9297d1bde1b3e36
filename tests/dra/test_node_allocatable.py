"""`dra.node_allocatable`: the node CPU and memory a pod's DRA devices account for (KEP-5517)."""

from __future__ import annotations

from typing import Any

from dra.node_allocatable import claim_statuses, dra_requests
from dra.quantity import Quantity

J = dict[str, Any]


def _slice(devices: list[J], *, generation: int = 1, driver: str = "gpu.example.com") -> J:
    return {
        "metadata": {"name": f"node-1-{driver}-{generation}"},
        "spec": {
            "driver": driver,
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": generation, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _gpu(name: str, **resources: J) -> J:
    return {"name": name, "nodeAllocatableResources": resources}


def _claim(
    name: str, *devices: str, namespace: str = "ml", driver: str = "gpu.example.com", **extra: Any
) -> J:
    results = [{"request": "r", "driver": driver, "pool": "node-1", "device": d, **extra} for d in devices]
    return {
        "metadata": {"name": name, "namespace": namespace},
        "status": {"allocation": {"devices": {"results": results}}},
    }


def _pod(
    claims: dict[str, str], containers: dict[str, list[str]], init: dict[str, list[str]] | None = None
) -> J:
    def container(name: str, refs: list[str], **extra: Any) -> J:
        return {"name": name, "resources": {"claims": [{"name": r} for r in refs]}, **extra}

    return {
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {
            "resourceClaims": [
                {"name": entry, "resourceClaimName": claim} for entry, claim in claims.items()
            ],
            "containers": [container(n, refs) for n, refs in containers.items()],
            "initContainers": [container(n, refs) for n, refs in (init or {}).items()],
        },
    }


GPU_OVERHEAD = {"memory": {"overhead": {"perPod": "2Gi", "perContainer": "1Gi"}}}


def test_it_charges_gpu_host_memory_per_pod_and_per_referencing_container() -> None:
    pod = _pod({"gpu": "train-gpu"}, {"a": ["gpu"], "b": ["gpu"], "c": []})
    statuses = claim_statuses(
        pod=pod, claims=[_claim("train-gpu", "gpu-0")], slices=[_slice([_gpu("gpu-0", **GPU_OVERHEAD)])]
    )
    assert statuses == [
        {
            "resourceClaimName": "train-gpu",
            "containers": ["a", "b"],
            "overhead": [{"name": "memory", "perPod": "2Gi", "perContainer": "1Gi"}],
        }
    ]
    assert dra_requests(pod=pod, statuses=statuses) == {"memory": Quantity.parse("4Gi")}


def test_it_counts_a_mapped_claim_once_however_many_containers_use_it() -> None:
    cpu = {"cpu": {"mapping": {"deviceMultiplier": "8"}}}
    slices = [_slice([_gpu("ccx-0", **cpu), _gpu("ccx-1", **cpu)], driver="cpu.example.com")]
    pod = _pod({"cpus": "pinned"}, {"a": ["cpus"], "b": ["cpus"], "c": ["cpus"]})
    statuses = claim_statuses(
        pod=pod, claims=[_claim("pinned", "ccx-0", "ccx-1", driver="cpu.example.com")], slices=slices
    )
    assert statuses[0]["mapping"] == [{"name": "cpu", "quantity": "16"}]
    assert dra_requests(pod=pod, statuses=statuses) == {"cpu": Quantity.parse("16")}


def test_it_maps_consumed_capacity_times_the_multiplier() -> None:
    cores = {"cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "2"}}}
    device = {
        **_gpu("socket-0", **cores),
        "capacity": {"cores": {"value": "64"}},
        "allowMultipleAllocations": True,
    }
    shared = _claim(
        "share", "socket-0", driver="cpu.example.com", shareID="x", consumedCapacity={"cores": "4"}
    )
    whole = _claim("whole", "socket-0", driver="cpu.example.com")
    slices = [_slice([device], driver="cpu.example.com")]
    assert claim_statuses(pod=_pod({"c": "share"}, {"a": ["c"]}), claims=[shared], slices=slices)[0][
        "mapping"
    ] == [{"name": "cpu", "quantity": "8"}]
    # Allocated whole (no consumedCapacity), the device consumes all of its capacity.
    assert claim_statuses(pod=_pod({"c": "whole"}, {"a": ["c"]}), claims=[whole], slices=slices)[0][
        "mapping"
    ] == [{"name": "cpu", "quantity": "128"}]


def test_it_charges_an_unreferenced_claim_without_per_container_overhead() -> None:
    pod = _pod({"gpu": "idle"}, {"a": []})
    statuses = claim_statuses(
        pod=pod, claims=[_claim("idle", "gpu-0")], slices=[_slice([_gpu("gpu-0", **GPU_OVERHEAD)])]
    )
    assert "containers" not in statuses[0]
    assert dra_requests(pod=pod, statuses=statuses) == {"memory": Quantity.parse("2Gi")}


def test_it_takes_the_largest_init_container_share_when_it_exceeds_the_others() -> None:
    heavy = {"memory": {"overhead": {"perContainer": "3Gi"}}}
    slices = [_slice([_gpu("gpu-0", **heavy)])]
    claims = [_claim("c", "gpu-0")]
    warmup = _pod({"gpu": "c"}, {"main": ["gpu"]}, init={"warmup": ["gpu"]})
    assert dra_requests(pod=warmup, statuses=claim_statuses(pod=warmup, claims=claims, slices=slices)) == {
        "memory": Quantity.parse("3Gi")
    }
    both = _pod({"gpu": "c"}, {"main": ["gpu"], "side": ["gpu"]}, init={"warmup": ["gpu"]})
    assert dra_requests(pod=both, statuses=claim_statuses(pod=both, claims=claims, slices=slices)) == {
        "memory": Quantity.parse("6Gi")
    }


def test_it_follows_template_generated_claims_and_ignores_other_namespaces() -> None:
    pod = _pod({}, {"a": ["gpu"]})
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    pod["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x7k2q"}]}
    slices = [_slice([_gpu("gpu-0", **GPU_OVERHEAD)])]
    elsewhere = _claim("p-gpu-x7k2q", "gpu-0", namespace="other")
    assert claim_statuses(pod=pod, claims=[elsewhere], slices=slices) == []
    statuses = claim_statuses(pod=pod, claims=[elsewhere, _claim("p-gpu-x7k2q", "gpu-0")], slices=slices)
    assert [s["resourceClaimName"] for s in statuses] == ["p-gpu-x7k2q"]


def test_it_reads_the_newest_generation_of_a_pool_and_skips_free_devices() -> None:
    slices = [
        _slice([_gpu("gpu-0", **GPU_OVERHEAD)], generation=1),
        _slice([{"name": "gpu-0"}], generation=2),
    ]
    pod = _pod({"gpu": "c"}, {"a": ["gpu"]})
    assert claim_statuses(pod=pod, claims=[_claim("c", "gpu-0")], slices=slices) == []
