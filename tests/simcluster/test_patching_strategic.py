"""Strategic merge patch: merge keys and list strategies come from the v1.37 schema; directives honoured."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from simcluster.patching import PatchError, apply_patch


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


POD = Kind("", "v1", "Pod", "pods", True)
CLAIM = Kind("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True)
RULE = Kind("resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", False)
SMP = "application/strategic-merge-patch+json"


def a_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "trainer",
            "namespace": "ml",
            "finalizers": ["example.com/a", "example.com/b"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u1"}],
        },
        "spec": {
            "containers": [
                {"name": "trainer", "image": "t:1", "env": [{"name": "A", "value": "1"}]},
                {"name": "sidecar", "image": "s:1"},
            ],
            "tolerations": [{"key": "a", "operator": "Exists"}],
            "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "train"}],
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}],
            "resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "trainer-gpus-abcde"}],
        },
    }


def a_claim() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
        },
        "status": {
            "allocation": {"devices": {"results": []}},
            "reservedFor": [{"resource": "pods", "name": "p1", "uid": "u1"}],
            "devices": [{"driver": "d.example.com", "pool": "p", "device": "gpu-0", "data": {"a": 1}}],
        },
    }


def smp(kind: Kind, current: dict[str, Any], body: Any) -> dict[str, Any]:
    return apply_patch(kind, current, json.dumps(body).encode(), SMP)


def test_it_merges_containers_and_env_by_name() -> None:
    result = smp(
        POD,
        a_pod(),
        {"spec": {"containers": [{"name": "trainer", "image": "t:2", "env": [{"name": "B", "value": "2"}]}]}},
    )
    assert result["spec"]["containers"] == [
        {
            "name": "trainer",
            "image": "t:2",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        },
        {"name": "sidecar", "image": "s:1"},
    ]


def test_it_deletes_a_list_element_with_the_delete_directive() -> None:
    result = smp(POD, a_pod(), {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}})
    assert [c["name"] for c in result["spec"]["containers"]] == ["trainer"]


def test_it_replaces_a_merging_list_with_the_replace_directive() -> None:
    body = {"spec": {"containers": [{"name": "only", "image": "o:1"}, {"$patch": "replace"}]}}
    assert smp(POD, a_pod(), body)["spec"]["containers"] == [{"name": "only", "image": "o:1"}]


def test_it_replaces_lists_without_a_strategy() -> None:
    result = smp(POD, a_pod(), {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}})
    assert result["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}]


def test_it_merges_pod_conditions_by_type() -> None:
    result = smp(POD, a_pod(), {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert result["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "PodScheduled", "status": "True"},
    ]


def test_it_merges_pod_resource_claims_and_their_statuses_by_name() -> None:
    body = {
        "spec": {"resourceClaims": [{"name": "nics", "resourceClaimName": "shared-nic"}]},
        "status": {"resourceClaimStatuses": [{"name": "nics", "resourceClaimName": "shared-nic"}]},
    }
    result = smp(POD, a_pod(), body)
    assert [c["name"] for c in result["spec"]["resourceClaims"]] == ["gpus", "nics"]
    assert [c["name"] for c in result["status"]["resourceClaimStatuses"]] == ["gpus", "nics"]


def test_it_merges_owner_references_by_uid_and_finalizers_as_a_set() -> None:
    body = {
        "metadata": {
            "ownerReferences": [{"apiVersion": "v1", "kind": "Y", "name": "y", "uid": "u2"}],
            "finalizers": ["example.com/b", "example.com/c"],
        }
    }
    result = smp(POD, a_pod(), body)
    assert [o["uid"] for o in result["metadata"]["ownerReferences"]] == ["u1", "u2"]
    assert result["metadata"]["finalizers"] == ["example.com/a", "example.com/b", "example.com/c"]


def test_it_removes_values_from_a_primitive_list() -> None:
    body = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"]}}
    assert smp(POD, a_pod(), body)["metadata"]["finalizers"] == ["example.com/b"]


def test_it_orders_a_merged_list_as_set_element_order_says() -> None:
    body = {
        "spec": {
            "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "trainer"}],
            "containers": [{"name": "trainer", "image": "t:3"}],
        }
    }
    result = smp(POD, a_pod(), body)
    assert [(c["name"], c["image"]) for c in result["spec"]["containers"]] == [
        ("sidecar", "s:1"),
        ("trainer", "t:3"),
    ]


def test_it_keeps_only_retained_keys() -> None:
    body = {
        "spec": {
            "resourceClaims": [
                {"name": "gpus", "resourceClaimName": "fixed", "$retainKeys": ["name", "resourceClaimName"]}
            ]
        }
    }
    result = smp(POD, a_pod(), body)
    assert result["spec"]["resourceClaims"] == [{"name": "gpus", "resourceClaimName": "fixed"}]


def test_it_replaces_a_map_with_the_replace_directive() -> None:
    body = {"spec": {"containers": [{"name": "sidecar", "$patch": "replace", "image": "s:9"}]}}
    result = smp(POD, a_pod(), body)
    assert result["spec"]["containers"][1] == {"name": "sidecar", "image": "s:9"}


def test_it_merges_reservations_by_uid() -> None:
    body = {"status": {"reservedFor": [{"resource": "pods", "name": "p2", "uid": "u2"}]}}
    result = smp(CLAIM, a_claim(), body)
    assert [r["uid"] for r in result["status"]["reservedFor"]] == ["u1", "u2"]
    body = {"status": {"reservedFor": [{"uid": "u1", "$patch": "delete"}]}}
    assert [r["uid"] for r in smp(CLAIM, result, body)["status"]["reservedFor"]] == ["u2"]


def test_it_replaces_device_statuses_which_have_no_merge_key() -> None:
    entry = {"driver": "d.example.com", "pool": "p", "device": "gpu-1"}
    result = smp(CLAIM, a_claim(), {"status": {"devices": [entry]}})
    assert result["status"]["devices"] == [entry]


def test_it_merges_taint_rule_conditions_by_type() -> None:
    rule = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "r"},
        "spec": {"taint": {"key": "k", "effect": "None"}},
        "status": {"conditions": [{"type": "EvictionInProgress", "status": "True", "reason": "A"}]},
    }
    body = {"status": {"conditions": [{"type": "EvictionInProgress", "status": "False", "reason": "Done"}]}}
    result = smp(RULE, rule, body)
    assert result["status"]["conditions"] == [
        {"type": "EvictionInProgress", "status": "False", "reason": "Done"}
    ]


def test_it_deletes_a_field_with_null() -> None:
    result = smp(POD, a_pod(), {"spec": {"tolerations": None}, "metadata": {"finalizers": None}})
    assert "tolerations" not in result["spec"]
    assert "finalizers" not in result["metadata"]


def test_it_refuses_a_merge_list_entry_without_its_key() -> None:
    with pytest.raises(PatchError) as raised:
        smp(POD, a_pod(), {"spec": {"containers": [{"image": "x"}]}})
    assert raised.value.status == 400
    assert "'name'" in raised.value.message
