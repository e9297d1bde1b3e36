"""Server-side apply: create, merge, removal of fields the manager dropped, conflicts, force, status writers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from simcluster.patching import PatchError, apply_patch, record_update

APPLY = "application/apply-patch+yaml"


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


RULE = Kind("resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", False)
POD = Kind("", "v1", "Pod", "pods", True)

RULE_YAML = """
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: gpu-0-maintenance
  labels: {team: ops}
spec:
  deviceSelector: {driver: gpu.example.com, pool: worker-07, device: gpu-0}
  taint: {key: example.com/maintenance, value: firmware-update, effect: NoSchedule}
"""


def apply(
    current: dict[str, Any] | None,
    body: str | dict[str, Any],
    manager: str = "kubectl",
    *,
    force: bool = False,
    kind: Kind = RULE,
    subresource: str | None = None,
) -> dict[str, Any]:
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    return apply_patch(kind, current, raw, APPLY, field_manager=manager, force=force, subresource=subresource)


def edited(**changes: Any) -> dict[str, Any]:
    """The rule's applied configuration with some spec.taint fields changed (``None`` drops one)."""
    config: dict[str, Any] = yaml.safe_load(RULE_YAML)
    for key, value in changes.items():
        if value is None:
            config["spec"]["taint"].pop(key)
        else:
            config["spec"]["taint"][key] = value
    return config


def managers(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"]["managedFields"]}


def test_it_creates_on_first_apply_and_records_the_manager() -> None:
    created = apply(None, RULE_YAML)
    assert created["spec"]["taint"]["effect"] == "NoSchedule"
    assert created["metadata"]["labels"] == {"team": "ops"}
    entry = managers(created)["kubectl"]
    assert entry["operation"] == "Apply"
    assert entry["apiVersion"] == "resource.k8s.io/v1"
    assert entry["fieldsType"] == "FieldsV1"
    assert entry["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:team": {}}},
        "f:spec": {
            "f:deviceSelector": {"f:device": {}, "f:driver": {}, "f:pool": {}},
            "f:taint": {"f:effect": {}, "f:key": {}, "f:value": {}},
        },
    }


def test_it_merges_a_changed_reapply_and_keeps_fields_it_never_owned() -> None:
    stored = apply(None, RULE_YAML)
    stored["spec"]["taint"]["timeAdded"] = "2026-09-01T10:00:00Z"  # server-defaulted, owned by nobody
    result = apply(stored, edited(effect="NoExecute"))
    assert result["spec"]["taint"] == {
        "key": "example.com/maintenance",
        "value": "firmware-update",
        "effect": "NoExecute",
        "timeAdded": "2026-09-01T10:00:00Z",
    }


def test_it_removes_fields_dropped_from_the_applied_configuration() -> None:
    stored = apply(None, RULE_YAML)
    config = edited(value=None)
    del config["metadata"]["labels"]
    del config["spec"]["deviceSelector"]["device"]
    result = apply(stored, config)
    assert "value" not in result["spec"]["taint"]
    assert "labels" not in result["metadata"]
    assert result["spec"]["deviceSelector"] == {"driver": "gpu.example.com", "pool": "worker-07"}
    assert "f:value" not in managers(result)["kubectl"]["fieldsV1"]["f:spec"]["f:taint"]


def test_it_keeps_a_dropped_field_that_another_manager_also_owns() -> None:
    stored = apply(None, RULE_YAML)
    shared = apply(stored, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                            "metadata": {"name": "gpu-0-maintenance", "labels": {"team": "ops"}}}, "labeller")  # fmt: skip
    config = yaml.safe_load(RULE_YAML)
    del config["metadata"]["labels"]
    result = apply(shared, config)
    assert result["metadata"]["labels"] == {"team": "ops"}


def test_it_refuses_to_change_another_managers_field_with_a_409() -> None:
    stored = apply(None, RULE_YAML)
    with pytest.raises(PatchError) as raised:
        apply(stored, edited(effect="NoExecute"), "dashboard")
    error = raised.value
    assert (error.status, error.reason) == (409, "Conflict")
    assert error.message == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.taint.effect'
    assert error.causes == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl"',
            "field": ".spec.taint.effect",
        }
    ]


def test_it_lists_every_conflict() -> None:
    stored = apply(None, RULE_YAML)
    with pytest.raises(PatchError) as raised:
        apply(stored, edited(effect="NoExecute", value="other"), "dashboard")
    assert raised.value.message == (
        'Apply failed with 2 conflicts: conflicts with "kubectl":\n- .spec.taint.effect\n- .spec.taint.value'
    )


def test_it_shares_a_field_applied_with_the_same_value_without_conflict() -> None:
    stored = apply(None, RULE_YAML)
    result = apply(stored, edited(), "dashboard")
    assert set(managers(result)) == {"kubectl", "dashboard"}


def test_it_takes_over_conflicting_fields_with_force() -> None:
    stored = apply(None, RULE_YAML)
    result = apply(stored, edited(effect="NoExecute"), "dashboard", force=True)
    assert result["spec"]["taint"]["effect"] == "NoExecute"
    owned = managers(result)
    assert "f:effect" in owned["dashboard"]["fieldsV1"]["f:spec"]["f:taint"]
    assert "f:effect" not in owned["kubectl"]["fieldsV1"]["f:spec"]["f:taint"]
    # kubectl no longer owns the effect, so its next apply without force conflicts the other way round.
    with pytest.raises(PatchError):
        apply(result, RULE_YAML)


def test_it_names_an_updating_manager_with_its_api_version() -> None:
    stored = apply(None, RULE_YAML)
    changed = json.loads(json.dumps(stored))
    changed["spec"]["taint"]["effect"] = "None"
    updated = record_update(RULE, stored, changed, field_manager="kubectl-edit")
    assert managers(updated)["kubectl-edit"]["operation"] == "Update"
    with pytest.raises(PatchError) as raised:
        apply(updated, edited(effect="NoExecute"), "dashboard")
    assert raised.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using resource.k8s.io/v1: .spec.taint.effect'
    )


def test_it_accepts_a_json_body() -> None:
    created = apply(None, json.dumps(yaml.safe_load(RULE_YAML)))
    assert created["spec"]["deviceSelector"]["device"] == "gpu-0"


def test_it_ignores_status_on_the_main_resource() -> None:
    config = yaml.safe_load(RULE_YAML)
    config["status"] = {"conditions": [{"type": "EvictionInProgress", "status": "True"}]}
    assert "status" not in apply(None, config)


STATUS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceTaintRule",
    "metadata": {"name": "gpu-0-maintenance"},
    "spec": {"taint": {"key": "ignored", "effect": "None"}},
    "status": {
        "conditions": [
            {
                "type": "EvictionInProgress",
                "status": "True",
                "reason": "PodsPendingEviction",
                "message": "2 pods",
                "lastTransitionTime": "2026-09-01T10:00:00Z",
            }
        ]
    },
}


def test_it_lets_a_status_writer_merge_conditions_by_type() -> None:
    stored = apply(None, RULE_YAML)
    stored["status"] = {"conditions": [{"type": "Other", "status": "True", "reason": "R", "message": "",
                                        "lastTransitionTime": "2026-09-01T09:00:00Z"}]}  # fmt: skip
    result = apply(stored, STATUS, "device-taint-eviction-controller", force=True, subresource="status")
    assert [c["type"] for c in result["status"]["conditions"]] == ["Other", "EvictionInProgress"]
    assert result["spec"] == stored["spec"]
    entry = managers(result)["device-taint-eviction-controller"]
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"]["f:status"]["f:conditions"]['k:{"type":"EvictionInProgress"}']["f:status"] == {}
    second = json.loads(json.dumps(STATUS))
    second["status"]["conditions"][0].update(status="False", reason="Completed", message="")
    again = apply(result, second, "device-taint-eviction-controller", force=True, subresource="status")
    assert [(c["type"], c["status"]) for c in again["status"]["conditions"]] == [
        ("Other", "True"),
        ("EvictionInProgress", "False"),
    ]


def test_it_merges_pod_containers_by_name_and_removes_a_dropped_one() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "ml"},
        "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]},
    }
    created = apply(None, pod, kind=POD)
    pod["spec"]["containers"] = [{"name": "a", "image": "a:2"}]
    result = apply(created, pod, kind=POD)
    assert result["spec"]["containers"] == [{"name": "a", "image": "a:2"}]


@pytest.mark.parametrize(
    ("body", "manager", "status"),
    [
        (RULE_YAML, None, 422),
        (RULE_YAML.replace("kind: DeviceTaintRule", "kind: DeviceClass"), "kubectl", 400),
        ("spec: [unclosed", "kubectl", 400),
        ("- just\n- a list\n", "kubectl", 400),
    ],
    ids=["no field manager", "wrong kind", "broken yaml", "not an object"],
)
def test_it_refuses_bad_apply_requests(body: str, manager: str | None, status: int) -> None:
    with pytest.raises(PatchError) as raised:
        apply_patch(RULE, None, body.encode(), APPLY, field_manager=manager)
    assert raised.value.status == status


def test_it_refuses_an_applied_configuration_that_carries_managed_fields() -> None:
    config = yaml.safe_load(RULE_YAML)
    config["metadata"]["managedFields"] = [{"manager": "me", "operation": "Apply", "fieldsType": "FieldsV1"}]
    with pytest.raises(PatchError) as raised:
        apply(None, config)
    assert (raised.value.status, raised.value.message) == (400, "metadata.managedFields must be nil")
