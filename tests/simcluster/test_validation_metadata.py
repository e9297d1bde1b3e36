"""Object metadata and schema-level checks shared by every kind."""

from __future__ import annotations

from typing import Any

import pytest

from simcluster.schema import drop_unknown_fields, is_unknown_field_cause
from simcluster.validation import validate
from tests.simcluster.validation_samples import (
    CLAIM,
    NAMESPACE,
    POD,
    RULE,
    SLICE,
    a_claim,
    a_pod,
    a_rule,
    a_slice,
)

SUBDOMAIN_MESSAGE = (
    'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
    "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def test_it_words_a_bad_name_like_kube_apiserver() -> None:
    rule = a_rule()
    rule["metadata"]["name"] = "Bad_Name"
    assert validate(RULE, rule, None)[0] == [
        {"reason": "FieldValueInvalid", "message": SUBDOMAIN_MESSAGE, "field": "metadata.name"}
    ]


def test_it_requires_a_name_or_generate_name() -> None:
    rule = a_rule()
    del rule["metadata"]["name"]
    assert validate(RULE, rule, None)[0] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: name or generateName is required",
            "field": "metadata.name",
        }
    ]
    rule["metadata"]["generateName"] = "drain-"
    assert validate(RULE, rule, None)[0] == []


@pytest.mark.parametrize(
    ("name", "valid"),
    [("team-a", True), ("team.a", False), ("a" * 63, True), ("a" * 64, False), ("Team", False)],
)
def test_it_wants_dns_labels_for_namespace_names(name: str, valid: bool) -> None:
    causes, _ = validate(NAMESPACE, namespace(name), None)
    assert (causes == []) is valid
    assert all(c["field"] == "metadata.name" for c in causes)


def test_it_allows_dots_in_names_of_other_kinds() -> None:
    slice_ = a_slice()
    slice_["metadata"]["name"] = "node-1.gpu.example.com-abcde"
    assert validate(SLICE, slice_, None)[0] == []


@pytest.mark.parametrize(
    ("labels", "field"),
    [
        ({"example.com/team": "a", "app": "b"}, None),
        ({"-bad": "x"}, "metadata.labels"),
        ({"Example.com/team": "x"}, "metadata.labels"),
        ({"a/b/c": "x"}, "metadata.labels"),
        ({"team": "has space"}, "metadata.labels"),
        ({"team": "v" * 64}, "metadata.labels"),
        # a trailing newline once passed: Python's `$` matches before it, Go's does not
        ({"app\n": "x"}, "metadata.labels"),
        ({"team": "gold\n"}, "metadata.labels"),
    ],
)
def test_it_checks_label_keys_and_values(labels: dict[str, str], field: str | None) -> None:
    pod = a_pod()
    pod["metadata"]["labels"] = labels
    causes, _ = validate(POD, pod, None)
    assert [c["field"] for c in causes] == ([] if field is None else [field])


def test_it_limits_annotations_to_256_kib() -> None:
    claim = a_claim()
    claim["metadata"]["annotations"] = {"example.com/blob": "x" * (256 * 1024)}
    assert validate(CLAIM, claim, None)[0] == [
        {
            "reason": "FieldValueTooLong",
            "message": "Too long: may not be more than 262144 bytes",
            "field": "metadata.annotations",
        }
    ]


def test_it_refuses_a_namespace_on_cluster_scoped_objects() -> None:
    rule = a_rule()
    rule["metadata"]["namespace"] = "default"
    assert [c["field"] for c in validate(RULE, rule, None)[0]] == ["metadata.namespace"]


def test_it_rejects_unknown_fields_with_their_path() -> None:
    claim = a_claim()
    claim["spec"]["devices"]["requests"][1]["exactly"]["deviceClass"] = "gpu"
    claim["spek"] = {}
    causes, _ = validate(CLAIM, claim, None)
    assert sorted(c["message"] for c in causes) == [
        'unknown field "spec.devices.requests[1].exactly.deviceClass"',
        'unknown field "spek"',
    ]


def test_it_rejects_the_v1beta1_request_shape() -> None:
    claim = a_claim()
    claim["spec"]["devices"] = {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}
    fields = {c["field"] for c in validate(CLAIM, claim, None)[0]}
    assert fields == {"spec.devices.requests[0].deviceClassName", "spec.devices.requests[0]"}


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("spec", "pool", "generation"), "3", 'Invalid value: "3": must be of type integer'),
        (("spec", "pool", "generation"), 1.5, "Invalid value: 1.5: must be of type integer"),
        (("spec", "allNodes"), "true", 'Invalid value: "true": must be of type boolean'),
        (("spec", "devices"), {"name": "gpu-0"}, 'Invalid value: "object": must be of type array'),
        (("spec", "pool"), "node-1", 'Invalid value: "node-1": must be of type object'),
    ],
)
def test_it_reports_wrong_types_with_the_field(path: tuple[str, ...], value: Any, message: str) -> None:
    slice_ = a_slice()
    node = slice_
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    causes, _ = validate(SLICE, slice_, None)
    assert {"reason": "FieldValueTypeInvalid", "message": message, "field": ".".join(path)} in causes


def test_it_accepts_timestamps_in_both_z_and_offset_forms() -> None:
    rule = a_rule()
    rule["spec"]["taint"]["timeAdded"] = "2026-09-01T10:00:00+00:00"
    assert validate(RULE, rule, None)[0] == []
    rule["spec"]["taint"]["timeAdded"] = "2026-09-01T10:00:00Z"
    assert validate(RULE, rule, None)[0] == []
    rule["spec"]["taint"]["timeAdded"] = "yesterday"
    assert [c["field"] for c in validate(RULE, rule, None)[0]] == ["spec.taint.timeAdded"]


def test_it_can_drop_unknown_fields_for_non_strict_field_validation() -> None:
    claim = a_claim()
    claim["spec"]["devices"]["requests"][1]["exactly"]["deviceClass"] = "gpu"
    claim["metadata"]["labels"] = {"colour": "blue"}
    claim["spek"] = {}
    causes, _ = validate(CLAIM, claim, None)
    assert all(is_unknown_field_cause(c) for c in causes) and len(causes) == 2
    dropped = drop_unknown_fields("resource.k8s.io", "v1", "ResourceClaim", claim)
    assert sorted(dropped) == ["spec.devices.requests[1].exactly.deviceClass", "spek"]
    assert validate(CLAIM, claim, None)[0] == []
    assert claim["metadata"]["labels"] == {"colour": "blue"}


def test_it_allows_only_one_controlling_owner() -> None:
    claim = a_claim()
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "p1", "uid": "u1", "controller": True}
    claim["metadata"]["ownerReferences"] = [owner, {**owner, "name": "p2", "uid": "u2"}]
    causes, _ = validate(CLAIM, claim, None)
    assert [c["field"] for c in causes] == ["metadata.ownerReferences"]
    assert "Only one reference can have Controller set to true" in causes[0]["message"]
    claim["metadata"]["ownerReferences"][1]["controller"] = False
    assert validate(CLAIM, claim, None)[0] == []
