"""The `features` topology and samples/alpha-features.yaml exercise each 1.37 beta and alpha: a 1.37
server accepts them, and the allocator with the features on gives each claim its promised answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dra.allocator import DEFAULT_FEATURES, Allocator
from dra.node_allocatable import claim_statuses, dra_requests
from dra.quantity import Quantity
from simcluster.controllers.driver import build_pool_slices
from simcluster.resources import resource_for
from simcluster.topology import TOPOLOGY_DIR, load_topology
from simcluster.validation import validate

SAMPLES = Path(TOPOLOGY_DIR, "samples", "alpha-features.yaml")
ALL_ON = DEFAULT_FEATURES | {
    "DerivedAttributes",
    "DeviceCompatibilityGroups",
    "ListTypeAttributes",
    "OptionalNodeOperations",
    "NodeAllocatableResources",
}
PLURALS = {
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
}


def _samples() -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(SAMPLES.read_text()) if doc]


def _world() -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, Any]]:
    topology = load_topology("features")
    slices: list[dict[str, Any]] = []
    for pool in topology.pools:
        for n, s in enumerate(
            build_pool_slices(
                driver=pool.driver,
                node=pool.node,
                pool=pool.pool_name,
                devices=pool.devices,
                counter_sets=pool.counter_sets,
                generation=1,
            )
        ):
            s.setdefault("metadata", {})["name"] = f"{pool.node}-{pool.driver}-{n}"
            slices.append(s)
    classes = list(topology.device_classes)
    claims = {
        obj["metadata"]["name"]: obj for plural, obj in topology.workloads if plural == "resourceclaims"
    }
    for doc in _samples():
        if doc["kind"] == "ResourceSlice":
            slices.append(doc)
        elif doc["kind"] == "DeviceClass":
            classes.append(doc)
        else:
            claims[doc["metadata"]["name"]] = doc
    node = next(n for n in topology.nodes if n["metadata"]["name"] == "feat-0")
    return slices, classes, claims, node


def test_it_ships_samples_a_1_37_server_accepts() -> None:
    problems = []
    for doc in _samples():
        resource = resource_for(PLURALS[doc["kind"]])
        assert resource is not None
        problems += [(doc["metadata"]["name"], c) for c in validate(resource, doc, None)[0]]
    assert problems == []


def _allocate(claim: str, features: frozenset[str] = ALL_ON) -> list[dict[str, Any]] | None:
    slices, classes, claims, node = _world()
    allocator = Allocator(classes=classes, slices=slices, features=features)
    return allocator.allocate(node, [claims[claim]])


def _devices(result: list[dict[str, Any]] | None) -> list[str]:
    assert result is not None
    return sorted(r["device"] for r in result[0]["devices"]["results"])


def test_it_aligns_gpu_and_nic_through_derived_attributes() -> None:
    assert _devices(_allocate("gpu-nic-same-numa")) == ["gpu-1", "nic-1"]


def test_it_matches_nics_by_a_shared_list_value() -> None:
    assert _devices(_allocate("two-nics-shared-numa")) == ["nic-0", "nic-1"]
    assert _allocate("two-nics-shared-numa", ALL_ON - {"ListTypeAttributes"}) is None


def test_it_keeps_mig_and_vgpu_apart_and_combines_mig_halves() -> None:
    assert _allocate("mig-and-vgpu") is None
    assert _devices(_allocate("two-mig-halves")) == ["gpu-0-mig-0", "gpu-0-mig-1"]


def test_it_copies_skip_node_operations_into_the_result() -> None:
    result = _allocate("license-seat")
    assert result is not None
    assert result[0]["devices"]["results"][0]["skipNodeOperations"] == ["*"]


def test_it_consumes_a_fractional_share_of_the_queue() -> None:
    result = _allocate("quarter-queue")
    assert result is not None
    assert result[0]["devices"]["results"][0]["consumedCapacity"] == {"queues": "300m"}


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        ("pinned-cores", {"cpu": Quantity.parse("8")}),
        ("gpu-with-host-memory", {"memory": Quantity.parse("2560Mi")}),
    ],
)
def test_it_accounts_node_cpu_and_memory_for_the_allocated_devices(
    claim: str, want: dict[str, Quantity]
) -> None:
    slices, _, claims, _ = _world()
    result = _allocate(claim)
    assert result is not None
    allocated = {**claims[claim], "status": {"allocation": result[0]}}
    pod = {
        "metadata": {"name": "p", "namespace": "features"},
        "spec": {
            "resourceClaims": [{"name": "c", "resourceClaimName": claim}],
            "containers": [{"name": "main", "resources": {"claims": [{"name": "c"}]}}],
        },
    }
    statuses = claim_statuses(pod=pod, claims=[allocated], slices=slices)
    assert dra_requests(pod=pod, statuses=statuses) == want
