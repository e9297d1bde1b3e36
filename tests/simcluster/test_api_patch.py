"""PATCH in every content type, through the official Python client, plus validation answers."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http, raw_json
from tests.simcluster.samples import sample

RULES = "/apis/resource.k8s.io/v1/devicetaintrules"


def _condition(type_: str, status: str = "True") -> dict:
    return {
        "type": type_,
        "status": status,
        "reason": "Testing",
        "message": "",
        "lastTransitionTime": "2026-09-01T10:00:00Z",
    }


@pytest.fixture
def rules(api: client.ApiClient) -> client.ResourceV1Api:
    resource_api = client.ResourceV1Api(api)
    resource_api.create_device_taint_rule(sample("devicetaintrules"))
    return resource_api


def test_it_applies_a_strategic_merge_patch_from_a_dict_body(rules: client.ResourceV1Api) -> None:
    rules.patch_device_taint_rule_status("drain-node-a", {"status": {"conditions": [_condition("A")]}})
    patched = rules.patch_device_taint_rule_status(
        "drain-node-a", {"status": {"conditions": [_condition("B")]}}
    )
    assert [c.type for c in patched.status.conditions] == ["A", "B"]  # merged by the `type` key


def test_it_applies_a_json_merge_patch(rules: client.ResourceV1Api) -> None:
    patched = rules.patch_device_taint_rule(
        "drain-node-a",
        {"spec": {"taint": {"value": None, "effect": "NoSchedule"}}},
        _content_type="application/merge-patch+json",
    )
    assert patched.spec.taint.effect == "NoSchedule"
    assert patched.spec.taint.value is None


def test_it_applies_a_json_patch_from_a_list_body(rules: client.ResourceV1Api) -> None:
    patched = rules.patch_device_taint_rule(
        "drain-node-a",
        [
            {"op": "replace", "path": "/spec/taint/effect", "value": "NoExecute"},
            {"op": "add", "path": "/metadata/labels", "value": {"reason": "firmware"}},
        ],
    )
    assert patched.spec.taint.effect == "NoExecute"
    assert patched.metadata.labels == {"reason": "firmware"}


def test_it_creates_and_updates_with_server_side_apply(api: client.ApiClient) -> None:
    resource_api = client.ResourceV1Api(api)
    applied = raw_json(
        resource_api.patch_device_class(
            "gpu.example.com",
            sample("deviceclasses"),
            field_manager="dradash-test",
            _content_type="application/apply-patch+yaml",
            _preload_content=False,
        )
    )
    assert applied["metadata"]["uid"]
    assert applied["metadata"]["managedFields"][0]["manager"] == "dradash-test"
    again = sample("deviceclasses")
    again["spec"]["extendedResourceName"] = "example.com/gpu"
    updated = resource_api.patch_device_class(
        "gpu.example.com", again, field_manager="dradash-test", _content_type="application/apply-patch+yaml"
    )
    assert updated.spec.extended_resource_name == "example.com/gpu"
    assert updated.metadata.generation == 2


def test_it_lets_a_status_writer_use_server_side_apply(rules: client.ResourceV1Api) -> None:
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain-node-a"},
        "status": {"conditions": [_condition("EvictionInProgress", "False")]},
    }
    patched = rules.patch_device_taint_rule_status(
        "drain-node-a", body, field_manager="eviction-controller", force=True,
        _content_type="application/apply-patch+yaml",
    )  # fmt: skip
    assert patched.status.conditions[0].type == "EvictionInProgress"


def test_it_refuses_an_invalid_object_naming_the_field_and_stores_nothing(
    cluster: SimCluster, http: Http
) -> None:
    bad = sample("devicetaintrules")
    bad["spec"]["taint"]["effect"] = "PreferNoSchedule"
    before = cluster.store.resource_version
    status, _, body = http.request("POST", RULES, bad)
    assert status == 422
    assert body["reason"] == "Invalid"
    assert body["details"]["kind"] == "DeviceTaintRule"
    assert body["details"]["causes"][0]["field"] == "spec.taint.effect"
    assert body["message"].startswith(
        'DeviceTaintRule.resource.k8s.io "drain-node-a" is invalid: spec.taint.effect: '
    )
    assert http.get(f"{RULES}/drain-node-a")[0] == 404
    assert cluster.store.resource_version == before


def test_it_refuses_an_invalid_patch_without_changing_the_object(rules: client.ResourceV1Api) -> None:
    with pytest.raises(ApiException) as raised:
        rules.patch_device_taint_rule(
            "drain-node-a",
            {"spec": {"taint": {"effect": "Sometimes"}}},
            _content_type="application/merge-patch+json",
        )
    assert raised.value.status == 422
    assert rules.read_device_taint_rule("drain-node-a").spec.taint.effect == "None"


def test_it_warns_about_a_rule_that_matches_every_device(http: Http) -> None:
    rule = sample("devicetaintrules")
    rule["spec"]["deviceSelector"] = {}
    status, headers, _ = http.request("POST", RULES, rule)
    assert status == 201
    warnings = headers.get_all("Warning")
    assert warnings and warnings[0].startswith('299 - "')
    assert "matches all devices" in warnings[0]


def test_it_honours_dry_run_on_patch(rules: client.ResourceV1Api) -> None:
    patched = rules.patch_device_taint_rule(
        "drain-node-a", {"spec": {"taint": {"effect": "NoExecute"}}}, dry_run="All"
    )
    assert patched.spec.taint.effect == "NoExecute"
    assert rules.read_device_taint_rule("drain-node-a").spec.taint.effect == "None"


def test_it_reports_apply_conflicts_with_fields_another_writer_set(api: client.ApiClient) -> None:
    resource_api = client.ResourceV1Api(api)
    resource_api.create_device_taint_rule(sample("devicetaintrules"), field_manager="dashboard")
    changed = sample("devicetaintrules")
    changed["spec"]["taint"]["effect"] = "NoExecute"
    with pytest.raises(ApiException) as raised:
        resource_api.patch_device_taint_rule(
            "drain-node-a", changed, field_manager="other", _content_type="application/apply-patch+yaml"
        )
    assert raised.value.status == 409
    status = json.loads(raised.value.body)
    assert status["message"].startswith('Apply failed with 1 conflict: conflict with "dashboard"')
    assert status["details"]["causes"][0]["field"] == ".spec.taint.effect"
    forced = resource_api.patch_device_taint_rule(
        "drain-node-a",
        changed,
        field_manager="other",
        force=True,
        _content_type="application/apply-patch+yaml",
    )
    assert forced.spec.taint.effect == "NoExecute"


@pytest.mark.parametrize(
    ("mode", "status", "warned"),
    [(None, 201, True), ("Warn", 201, True), ("Ignore", 201, False), ("Strict", 400, False)],
)
def test_it_handles_unknown_fields_by_field_validation(
    http: Http, mode: str | None, status: int, warned: bool
) -> None:
    rule = sample("devicetaintrules")
    rule["spec"]["taint"]["colour"] = "red"
    query = f"?fieldValidation={mode}" if mode else ""
    code, headers, body = http.request("POST", RULES + query, rule)
    assert code == status, body
    if status == 400:
        assert body["message"] == (
            'DeviceTaintRule in version "v1" cannot be handled as a DeviceTaintRule: strict decoding error: '
            'unknown field "spec.taint.colour"'
        )
        assert http.get(f"{RULES}/drain-node-a")[0] == 404
        return
    assert "colour" not in body["spec"]["taint"]
    assert bool(headers.get_all("Warning")) is warned
    if warned:
        assert headers.get_all("Warning") == ['299 - "unknown field \\"spec.taint.colour\\""']


def test_it_keeps_a_typed_client_read_modify_write_of_an_unchanged_object_a_no_op(
    rules: client.ResourceV1Api, cluster: SimCluster
) -> None:
    rule = rules.read_device_taint_rule("drain-node-a")  # the client re-serializes times as +00:00
    replaced = rules.replace_device_taint_rule("drain-node-a", rule)
    assert replaced.metadata.resource_version == rule.metadata.resource_version
    assert replaced.metadata.generation == 1
    stored = cluster.store.get("devicetaintrules", "drain-node-a")
    assert stored["spec"]["taint"]["timeAdded"].endswith("Z")
