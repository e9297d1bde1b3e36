"""Upstream fidelity beyond upstream's own table: the node-local error and its callers' view of it,
feature sets upstream serves with its stable allocator, gate names, and the messages of subrequests."""

from __future__ import annotations

import pytest

from dra.allocator import AllocationError, Allocator, NodeAllocationError, allocate
from tests.dra.upstream_cases import (
    CLASS_A,
    CLASS_A_OBJ,
    DRIVER_A,
    NODE_1,
    NODE_1_OBJ,
    NODE_2,
    NODE_2_OBJ,
    STRING,
    J,
    dev,
    distinct,
    first_of,
    labels,
    one_device,
    req,
    rslice,
    sub,
    uclaim,
)

STABLE = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})
ONE = uclaim("claim-0", req("req-0", CLASS_A))
DUPLICATED_ON_NODE_1 = [
    rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
    rslice("slice-2", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
]


def _allocate(
    slices: list[J], claims: list[J], *, features: frozenset[str] = frozenset(), node: J = NODE_1_OBJ
) -> list[J] | None:
    return allocate(
        classes=[CLASS_A_OBJ], slices=slices, allocated_claims=[], claims=claims, node=node, features=features
    )


def test_it_raises_a_node_local_error_naming_each_invalid_pool_and_why() -> None:
    with pytest.raises(NodeAllocationError) as info:
        _allocate(DUPLICATED_ON_NODE_1, [ONE])
    error = info.value
    assert isinstance(error, AllocationError)
    assert error.node_local is True
    assert error.pools == {"driver-a/pool-1": "duplicate device name device-1"}
    assert (
        str(error)
        == "invalid resource pools were encountered (driver-a/pool-1: duplicate device name device-1)"
    )


def test_it_marks_fatal_errors_as_not_node_local() -> None:
    with pytest.raises(AllocationError) as info:
        _allocate(DUPLICATED_ON_NODE_1, [uclaim("claim-0", req("req-0", "no-such-class"))])
    assert info.value.node_local is False
    assert not isinstance(info.value, NodeAllocationError)


def test_it_fails_only_the_nodes_that_reach_the_invalid_pool() -> None:
    allocator = Allocator(
        classes=[CLASS_A_OBJ],
        slices=[*DUPLICATED_ON_NODE_1, one_device("slice-3", NODE_2, "pool-2", DRIVER_A)],
    )
    with pytest.raises(NodeAllocationError):
        allocator.allocate(NODE_1_OBJ, [ONE])
    results = allocator.allocate(NODE_2_OBJ, [ONE])
    assert results is not None
    assert results[0]["devices"]["results"][0]["pool"] == "pool-2"


def test_it_reports_the_invalid_pool_also_when_every_other_device_is_in_use() -> None:
    # A full node is rejected before the search; the invalid pool must still be the reason.
    in_use = {
        "metadata": {"name": "busy", "namespace": "x"},
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "r", "driver": DRIVER_A, "pool": "pool-2", "device": "device-1"}]
                }
            }
        },
    }
    allocator = Allocator(
        classes=[CLASS_A_OBJ],
        slices=[*DUPLICATED_ON_NODE_1, one_device("slice-3", NODE_1, "pool-2", DRIVER_A)],
        allocated_claims=[in_use],
    )
    for _ in range(2):  # the second call takes the shortcut for nodes found full
        with pytest.raises(NodeAllocationError):
            allocator.allocate(NODE_1_OBJ, [ONE])


def test_it_does_not_report_an_invalid_pool_when_another_pool_serves() -> None:
    results = _allocate([*DUPLICATED_ON_NODE_1, one_device("slice-3", NODE_1, "pool-2", DRIVER_A)], [ONE])
    assert results is not None


def test_it_accepts_gate_names_with_the_dra_prefix() -> None:
    claims = [uclaim("claim-0", first_of("req-0", sub("subReq-0", CLASS_A)))]
    slices = [one_device("slice-1", NODE_1, "pool-1", DRIVER_A)]
    results = _allocate(slices, claims, features=frozenset({"DRAPrioritizedList"}))
    assert results is not None
    assert results[0]["devices"]["results"][0]["request"] == "req-0/subReq-0"


def test_it_names_a_subrequest_by_its_own_name_like_upstream() -> None:
    claims = [uclaim("claim-0", first_of("req-0", sub("subReq-0", "no-such-class")))]
    with pytest.raises(
        AllocationError,
        match="claim claim-0, request subReq-0: could not retrieve device class no-such-class",
    ):
        _allocate([], claims, features=frozenset({"PrioritizedList"}))


# --------------------------------------------------------------------------- upstream's stable allocator


def test_it_refuses_distinct_attribute_as_an_unknown_constraint_with_the_stable_feature_set() -> None:
    claims = [uclaim("claim-0", req("req-0", CLASS_A), constraints=[distinct(STRING)])]
    with pytest.raises(
        AllocationError,
        match=r"claim claim-0, constraint #0: empty constraint \(unsupported constraint type\?\)",
    ):
        _allocate([one_device("slice-1", NODE_1, "pool-1", DRIVER_A)], claims, features=STABLE)


def test_it_allows_distinct_attribute_once_upstream_would_use_its_newer_allocator() -> None:
    claims = [uclaim("claim-0", req("req-0", CLASS_A), constraints=[distinct(STRING)])]
    slices = [
        rslice(
            "slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", attrs={"stringAttribute": {"string": "a"}})
        )
    ]
    assert _allocate(slices, claims, features=STABLE | {"DeviceBindingAndStatus"}) is not None


def test_it_ignores_capacity_requests_with_the_stable_feature_set_and_refuses_them_otherwise() -> None:
    claims = [uclaim("claim-0", req("req-0", CLASS_A, capacity="1"))]
    slices = [rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", capacity={"capacity-0": "8"}))]
    results = _allocate(slices, claims, features=STABLE)
    assert results is not None
    assert "consumedCapacity" not in results[0]["devices"]["results"][0]
    with pytest.raises(
        AllocationError, match="has capacity requests, but the DRAConsumableCapacity feature is disabled"
    ):
        _allocate(slices, claims, features=frozenset({"DeviceTaints", "DeviceBindingAndStatus"}))


def test_it_pins_binds_to_node_devices_to_the_node_unless_the_stable_allocator_would_serve() -> None:
    slices = [
        rslice("slice-1", labels("planet", "earth"), "pool-1", DRIVER_A, dev("device-1", binds_to_node=True))
    ]
    newer = _allocate(slices, [ONE], features=frozenset({"ConsumableCapacity"}))
    assert newer is not None
    assert newer[0]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [NODE_1]
    stable = _allocate(slices, [ONE], features=STABLE)
    assert stable is not None
    assert stable[0]["nodeSelector"] == labels("planet", "earth")


# --------------------------------------------------------------------------- attributes and requests


def test_it_allocates_a_device_with_an_untyped_attribute_when_no_selector_looks_at_it() -> None:
    no_selectors = {"metadata": {"name": CLASS_A}, "spec": {}}
    slices = [rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", attrs={"odd": {}}))]
    results = allocate(
        classes=[no_selectors], slices=slices, allocated_claims=[], claims=[ONE], node=NODE_1_OBJ
    )
    assert results is not None


def test_it_allocates_two_requests_of_the_same_name_as_upstream_does() -> None:
    claims = [uclaim("claim-0", req("req-0", CLASS_A), req("req-0", CLASS_A))]
    slices = [rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), dev("device-2"))]
    results = _allocate(slices, claims)
    assert results is not None
    assert [r["device"] for r in results[0]["devices"]["results"]] == ["device-1", "device-2"]


def test_it_derives_binding_from_both_gates_as_kube_scheduler_does() -> None:
    slices = [rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", binding=(["IsPrepare"], [])))]
    assert _allocate(slices, [ONE], features=frozenset({"DRADeviceBindingConditions"})) is None
    both = frozenset({"DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"})
    results = _allocate(slices, [ONE], features=both)
    assert results is not None
    assert results[0]["devices"]["results"][0]["bindingConditions"] == ["IsPrepare"]
