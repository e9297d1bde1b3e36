"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) as the simulated API server applies them."""

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


RULE = Kind("resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", False)
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def a_rule() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain", "labels": {"team": "ops", "tier": "gpu"}},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1"},
            "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "None"},
        },
        "status": {"conditions": [{"type": "EvictionInProgress", "status": "False"}]},
    }


def patch(body: Any, content_type: str, current: dict[str, Any] | None = None) -> dict[str, Any]:
    return apply_patch(RULE, current or a_rule(), json.dumps(body).encode(), content_type)


@pytest.mark.parametrize(
    ("body", "expected_spec", "expected_labels"),
    [
        (
            {"spec": {"taint": {"effect": "NoExecute"}}},
            {
                "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1"},
                "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "NoExecute"},
            },
            {"team": "ops", "tier": "gpu"},
        ),
        (
            {"spec": {"deviceSelector": {"pool": None}}, "metadata": {"labels": {"tier": None, "new": "x"}}},
            {
                "deviceSelector": {"driver": "gpu.example.com"},
                "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "None"},
            },
            {"team": "ops", "new": "x"},
        ),
        (
            {"spec": {"deviceSelector": {}}},
            {
                "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1"},
                "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "None"},
            },
            {"team": "ops", "tier": "gpu"},
        ),
    ],
    ids=["change a leaf", "null deletes", "empty object is a no-op"],
)
def test_it_merges_per_rfc_7386(body: Any, expected_spec: Any, expected_labels: Any) -> None:
    result = patch(body, MERGE)
    assert result["spec"] == expected_spec
    assert result["metadata"]["labels"] == expected_labels


def test_it_replaces_lists_in_a_merge_patch() -> None:
    result = patch({"status": {"conditions": [{"type": "Other", "status": "True"}]}}, MERGE)
    assert result["status"]["conditions"] == [{"type": "Other", "status": "True"}]


def test_it_does_not_modify_the_stored_object() -> None:
    stored = a_rule()
    patch({"spec": {"taint": {"effect": "NoExecute"}}}, MERGE, stored)
    assert stored == a_rule()


@pytest.mark.parametrize(
    ("operations", "check"),
    [
        (
            [{"op": "replace", "path": "/spec/taint/effect", "value": "NoSchedule"}],
            ("spec", "taint", "effect", "NoSchedule"),
        ),
        (
            [{"op": "add", "path": "/metadata/labels/example.com~1owner", "value": "me"}],
            ("metadata", "labels", "example.com/owner", "me"),
        ),
        (
            [{"op": "add", "path": "/metadata/labels/a~0b", "value": "tilde"}],
            ("metadata", "labels", "a~b", "tilde"),
        ),
        (
            [
                {"op": "remove", "path": "/spec/deviceSelector/pool"},
                {"op": "add", "path": "/spec/deviceSelector/device", "value": "gpu-0"},
            ],
            ("spec", "deviceSelector", "device", "gpu-0"),
        ),
        (
            [{"op": "copy", "from": "/metadata/labels/team", "path": "/metadata/labels/owner"}],
            ("metadata", "labels", "owner", "ops"),
        ),
        (
            [{"op": "move", "from": "/metadata/labels/team", "path": "/metadata/labels/group"}],
            ("metadata", "labels", "group", "ops"),
        ),
        (
            [
                {"op": "test", "path": "/spec/taint/effect", "value": "None"},
                {"op": "replace", "path": "/spec/taint/effect", "value": "NoExecute"},
            ],
            ("spec", "taint", "effect", "NoExecute"),
        ),
    ],
    ids=["replace", "add with ~1", "add with ~0", "remove then add", "copy", "move", "test then replace"],
)
def test_it_applies_json_patch_operations(operations: list[Any], check: tuple[str, ...]) -> None:
    result: Any = patch(operations, JSON_PATCH)
    *path, expected = check
    for part in path:
        result = result[part]
    assert result == expected


def test_it_appends_to_a_list_with_dash_and_inserts_by_index() -> None:
    condition = {"type": "Ready", "status": "True"}
    result = patch([{"op": "add", "path": "/status/conditions/-", "value": condition}], JSON_PATCH)
    assert [c["type"] for c in result["status"]["conditions"]] == ["EvictionInProgress", "Ready"]
    result = patch([{"op": "add", "path": "/status/conditions/0", "value": condition}], JSON_PATCH)
    assert [c["type"] for c in result["status"]["conditions"]] == ["Ready", "EvictionInProgress"]


def test_it_moves_a_label_away_from_its_old_key() -> None:
    result = patch(
        [{"op": "move", "from": "/metadata/labels/team", "path": "/metadata/labels/group"}], JSON_PATCH
    )
    assert "team" not in result["metadata"]["labels"]


def test_it_refuses_a_failed_test_with_422_and_changes_nothing() -> None:
    stored = a_rule()
    operations = [
        {"op": "replace", "path": "/spec/taint/effect", "value": "NoExecute"},
        {"op": "test", "path": "/spec/taint/value", "value": "firmware"},
    ]
    with pytest.raises(PatchError) as raised:
        apply_patch(RULE, stored, json.dumps(operations).encode(), JSON_PATCH)
    assert raised.value.status == 422
    assert raised.value.reason == "Invalid"
    # a real server says only this (kubectl: "The request is invalid: the server rejected our request …")
    assert raised.value.message == "the server rejected our request due to an error in our request"
    assert raised.value.causes == []
    assert "/spec/taint/value" in raised.value.detail
    assert '"firmware"' in raised.value.detail and '"drain"' in raised.value.detail
    assert stored == a_rule()


@pytest.mark.parametrize(
    ("operations", "status", "fragment"),
    [
        ([{"op": "remove", "path": "/spec/deviceSelector/device"}], 422, "nonexistent key 'device'"),
        ([{"op": "replace", "path": "/spec/nothing/here", "value": 1}], 422, "does not exist"),
        ([{"op": "add", "path": "/status/conditions/5", "value": {}}], 422, "out of range"),
        ([{"op": "frobnicate", "path": "/spec"}], 422, "Unexpected kind: frobnicate"),
        ([{"op": "remove"}], 422, "remove operation failed to decode path"),
        ([{"op": "add", "path": "spec/taint", "value": 1}], 400, "invalid JSON pointer"),
        ([{"op": "add", "path": "/spec/taint/key"}], 400, "has no value"),
        ({"op": "add"}, 400, "cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
    ],
)
def test_it_explains_bad_json_patches(operations: Any, status: int, fragment: str) -> None:
    """Patches that do not decode (400) say why; a patch that does not apply, an unknown op among them (422),
    says it in the log only, as upstream."""
    with pytest.raises(PatchError) as raised:
        patch(operations, JSON_PATCH)
    assert raised.value.status == status
    assert fragment in (raised.value.detail if status == 422 else raised.value.message)


def test_it_refuses_bodies_that_are_not_json() -> None:
    with pytest.raises(PatchError) as raised:
        apply_patch(RULE, a_rule(), b"{not json", MERGE)
    assert (raised.value.status, raised.value.reason) == (400, "BadRequest")


def test_it_refuses_unknown_patch_types_with_415() -> None:
    with pytest.raises(PatchError) as raised:
        apply_patch(RULE, a_rule(), b"{}", "application/xml")
    assert raised.value.status == 415
    assert "application/merge-patch+json" in raised.value.message
