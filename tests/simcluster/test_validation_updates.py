"""Rules that compare a write with the stored object: immutability, claim status, stored unknown effects."""

from __future__ import annotations

import copy
from typing import Any

from simcluster.validation import validate
from tests.simcluster.validation_samples import (
    CLAIM,
    POD,
    POOL_REQUEST,
    RULE,
    SLICE,
    TEMPLATE,
    a_claim,
    a_pod,
    a_pool_request,
    a_rule,
    a_slice,
    a_template,
)

Obj = dict[str, Any]


def allocated(claim: Obj) -> Obj:
    claim = copy.deepcopy(claim)
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu/big", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
                    {"request": "gpu/big", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"},
                    {"request": "nic", "driver": "nic.example.com", "pool": "node-1", "device": "nic-0"},
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                ]
            },
        }
    }
    return claim


def fields(causes: list[dict[str, str]]) -> set[str]:
    return {c["field"] for c in causes}


def test_it_refuses_a_changed_claim_spec_as_immutable() -> None:
    old = a_claim()
    new = copy.deepcopy(old)
    new["spec"]["devices"]["requests"][1]["exactly"]["count"] = 2
    causes, _ = validate(CLAIM, new, old)
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "object": field is immutable',
            "field": "spec",
        }
    ]


def test_it_allows_an_unchanged_claim_spec_with_new_labels() -> None:
    old = a_claim()
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"team": "ml"}
    assert validate(CLAIM, new, old)[0] == []


def test_it_refuses_a_changed_template_spec() -> None:
    old = a_template()
    new = copy.deepcopy(old)
    new["spec"]["metadata"]["labels"]["team"] = "infra"
    assert fields(validate(TEMPLATE, new, old)[0]) == {"spec"}


def test_it_refuses_a_changed_pool_status_request_spec() -> None:
    old = a_pool_request()
    new = copy.deepcopy(old)
    new["spec"]["limit"] = 10
    assert fields(validate(POOL_REQUEST, new, old)[0]) == {"spec"}


def test_it_refuses_moving_a_slice_to_another_driver_pool_or_node() -> None:
    old = a_slice()
    new = copy.deepcopy(old)
    new["spec"]["driver"] = "other.example.com"
    new["spec"]["pool"]["name"] = "node-2"
    new["spec"]["nodeName"] = "node-2"
    causes, _ = validate(SLICE, new, old)
    assert fields(causes) == {"spec.driver", "spec.pool.name", "spec.nodeName"}
    assert all(c["message"].endswith("field is immutable") for c in causes)


def test_it_allows_a_slice_update_that_bumps_the_generation() -> None:
    old = a_slice()
    new = copy.deepcopy(old)
    new["spec"]["pool"]["generation"] = 4
    new["spec"]["devices"].pop()
    assert validate(SLICE, new, old)[0] == []


def test_it_keeps_an_unknown_stored_taint_effect_on_update_but_refuses_it_on_create() -> None:
    stored = a_rule()
    stored["spec"]["taint"]["effect"] = "FutureEffect"
    assert fields(validate(RULE, stored, None)[0]) == {"spec.taint.effect"}
    relabelled = copy.deepcopy(stored)
    relabelled["metadata"]["labels"] = {"team": "ops"}
    assert validate(RULE, relabelled, stored)[0] == []
    changed = copy.deepcopy(stored)
    changed["spec"]["taint"]["effect"] = "OtherFuture"
    assert fields(validate(RULE, changed, stored)[0]) == {"spec.taint.effect"}


def test_it_keeps_an_unknown_stored_device_taint_effect_on_update() -> None:
    stored = a_slice()
    stored["spec"]["devices"][0]["taints"] = [{"key": "example.com/ecc", "effect": "FutureEffect"}]
    new = copy.deepcopy(stored)
    new["spec"]["pool"]["generation"] = 4
    assert validate(SLICE, new, stored)[0] == []


def test_it_allows_setting_and_clearing_an_allocation() -> None:
    claim = a_claim()
    assert validate(CLAIM, allocated(claim), claim, subresource="status")[0] == []
    assert validate(CLAIM, claim, allocated(claim), subresource="status")[0] == []


def test_it_refuses_modifying_an_allocation() -> None:
    old = allocated(a_claim())
    new = copy.deepcopy(old)
    new["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-7"
    causes, _ = validate(CLAIM, new, old, subresource="status")
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "object": field is immutable',
            "field": "status.allocation",
        }
    ]


def test_it_refuses_results_for_requests_the_claim_does_not_have() -> None:
    claim = a_claim()
    new = allocated(claim)
    new["status"]["allocation"]["devices"]["results"][0]["request"] = "tpu"
    causes, _ = validate(CLAIM, new, claim, subresource="status")
    assert fields(causes) == {"status.allocation.devices.results[0].request"}


def test_it_requires_an_allocation_before_reservations() -> None:
    claim = a_claim()
    new = copy.deepcopy(claim)
    new["status"] = {"reservedFor": [{"resource": "pods", "name": "trainer", "uid": "u1"}]}
    causes, _ = validate(CLAIM, new, claim, subresource="status")
    assert causes == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: may not be specified when `allocated` is not set",
            "field": "status.reservedFor",
        }
    ]


def test_it_limits_reservations_to_256_unique_uids() -> None:
    old = allocated(a_claim())
    new = copy.deepcopy(old)
    new["status"]["reservedFor"] = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(257)]
    assert validate(CLAIM, new, old, subresource="status")[0] == [
        {
            "reason": "FieldValueTooMany",
            "message": "Too many: 257: must have at most 256 items",
            "field": "status.reservedFor",
        }
    ]
    new["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "u1"}] * 2
    causes, _ = validate(CLAIM, new, old, subresource="status")
    assert fields(causes) == {"status.reservedFor[1]"}


def device_status(**extra: Any) -> Obj:
    return {"driver": "nic.example.com", "pool": "node-1", "device": "nic-0", **extra}


def test_it_accepts_status_for_allocated_devices() -> None:
    old = allocated(a_claim())
    new = copy.deepcopy(old)
    new["status"]["devices"] = [
        device_status(
            conditions=[
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Configured",
                    "lastTransitionTime": "2026-09-01T10:00:00Z",
                }
            ],
            data={"vf": 3},
            networkData={
                "interfaceName": "net1",
                "ips": ["10.0.0.5/24", "fd00::5/64"],
                "hardwareAddress": "ea:9f:00:01",
            },
        )
    ]
    assert validate(CLAIM, new, old, subresource="status")[0] == []


def test_it_refuses_status_for_devices_not_in_the_allocation() -> None:
    old = allocated(a_claim())
    new = copy.deepcopy(old)
    new["status"]["devices"] = [device_status(device="nic-9")]
    causes, _ = validate(CLAIM, new, old, subresource="status")
    assert fields(causes) == {"status.devices[0]"}
    assert "must be an allocated device in the claim" in causes[0]["message"]


def test_it_checks_device_status_limits() -> None:
    old = allocated(a_claim())
    new = copy.deepcopy(old)
    condition = {"status": "True", "reason": "R", "lastTransitionTime": "2026-09-01T10:00:00Z"}
    new["status"]["devices"] = [
        device_status(
            conditions=[{**condition, "type": f"T{i}"} for i in range(9)],
            data={"blob": "x" * 10240},
            networkData={
                "interfaceName": "i" * 257,
                "hardwareAddress": "h" * 129,
                "ips": ["10.0.0.1/24", "10.0.0.1/24", "not-an-ip"],
            },
        )
    ]
    causes, _ = validate(CLAIM, new, old, subresource="status")
    assert fields(causes) == {
        "status.devices[0].conditions",
        "status.devices[0].data",
        "status.devices[0].networkData.interfaceName",
        "status.devices[0].networkData.hardwareAddress",
        "status.devices[0].networkData.ips[1]",
        "status.devices[0].networkData.ips[2]",
    }


def test_it_refuses_seventeen_ips() -> None:
    old = allocated(a_claim())
    new = copy.deepcopy(old)
    new["status"]["devices"] = [device_status(networkData={"ips": [f"10.0.0.{i}/24" for i in range(17)]})]
    causes, _ = validate(CLAIM, new, old, subresource="status")
    assert [c["message"] for c in causes] == ["Too many: 17: must have at most 16 items"]


def test_it_refuses_pod_spec_changes_except_image_and_tolerations() -> None:
    old = a_pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "registry.example.com/trainer:1.5"
    new["spec"]["tolerations"] = [{"key": "example.com/x", "operator": "Exists"}]
    assert validate(POD, new, old)[0] == []
    new["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "other"
    causes, _ = validate(POD, new, old)
    assert fields(causes) == {"spec"}
    assert causes[0]["message"].startswith("Forbidden: pod updates may not change fields other than")


def test_it_lets_the_status_writer_leave_the_spec_alone() -> None:
    old = a_pod()
    new = copy.deepcopy(old)
    new["status"] = {"phase": "Running"}
    assert validate(POD, new, old, subresource="status")[0] == []


def test_it_refuses_renaming_an_object() -> None:
    old = a_rule()
    new = copy.deepcopy(old)
    new["metadata"]["name"] = "other"
    assert fields(validate(RULE, new, old)[0]) == {"metadata.name"}


def test_it_freezes_a_pool_status_request_once_answered() -> None:
    request = a_pool_request()
    answered = copy.deepcopy(request)
    answered["status"] = {"poolCount": 1, "pools": []}
    assert validate(POOL_REQUEST, answered, request, subresource="status")[0] == []
    changed = copy.deepcopy(answered)
    changed["status"]["poolCount"] = 2
    causes, _ = validate(POOL_REQUEST, changed, answered, subresource="status")
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "object": field is immutable',
            "field": "status",
        }
    ]


def test_it_refuses_new_reservations_on_a_claim_being_deleted() -> None:
    old = allocated(a_claim())
    old["metadata"]["deletionTimestamp"] = "2026-09-01T10:00:00Z"
    old["status"]["reservedFor"] = [{"resource": "pods", "name": "p1", "uid": "u1"}]
    dropped = copy.deepcopy(old)
    dropped["status"]["reservedFor"] = []
    assert validate(CLAIM, dropped, old, subresource="status")[0] == []
    added = copy.deepcopy(old)
    added["status"]["reservedFor"].append({"resource": "pods", "name": "p2", "uid": "u2"})
    causes, _ = validate(CLAIM, added, old, subresource="status")
    assert [c["reason"] for c in causes] == ["FieldValueForbidden"]
    assert "new entries may not be added" in causes[0]["message"]


def test_it_checks_share_ids_of_new_results() -> None:
    claim = a_claim()
    new = allocated(claim)
    new["status"]["allocation"]["devices"]["results"][2]["shareID"] = "NOT-A-UUID"
    causes, _ = validate(CLAIM, new, claim, subresource="status")
    assert fields(causes) == {"status.allocation.devices.results[2].shareID"}
    # a UUID followed by a newline once passed (Python's `$` matches before it)
    new["status"]["allocation"]["devices"]["results"][2]["shareID"] = "0f6b1c1e-8c4e-4a4e-9d0a-3f1e2d3c4b5a\n"
    causes, _ = validate(CLAIM, new, claim, subresource="status")
    assert fields(causes) == {"status.allocation.devices.results[2].shareID"}
