"""Upstream's TestValidateDeviceTaint and TestValidateDeviceTaintUpdate tables
(validation_devicetaintrule_test.go, the stored version without deviceClassName and CEL selectors, which
1.35 removed), case by case through a running simcluster (updates through `validate`).

Left out: resource-version (see `metadata_cases`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from simcluster.validation import validate
from tests.simcluster.upstream_validation import (
    BAD_NAME,
    DNS_LABEL,
    SUBDOMAIN,
    Case,
    Cause,
    assert_answers,
    invalid,
    metadata_cases,
    not_supported,
    required,
)
from tests.simcluster.validation_samples import RULE, Obj

EFFECTS = ["NoExecute", "NoSchedule", "None"]


def rule(name: str = "foo", **taint: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"driver": "test.example.com", "pool": "foo", "device": "foo"},
            "taint": taint or {"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule"},
        },
    }


def selecting(field: str, value: str) -> Callable[[], Obj]:
    def build() -> Obj:
        obj = rule()
        obj["spec"]["deviceSelector"][field] = value
        return obj

    return build


CASES = [
    *metadata_cases("good", rule),
    Case(
        "bad-driver",
        selecting("driver", BAD_NAME),
        [invalid("spec.deviceSelector.driver", BAD_NAME, SUBDOMAIN)],
    ),
    Case("bad-pool", selecting("pool", BAD_NAME), [invalid("spec.deviceSelector.pool", BAD_NAME, SUBDOMAIN)]),
    Case(
        "bad-device",
        selecting("device", BAD_NAME),
        [invalid("spec.deviceSelector.device", BAD_NAME, DNS_LABEL)],
    ),
    Case("valid-taint", lambda: rule(key="foo", value="foo", effect="NoExecute")),
    Case("required-taint", lambda: rule(key="foo", value="foo"), [required("spec.taint.effect")]),
    Case(
        "invalid-taint",
        lambda: rule(key="foo", value="foo", effect="some-other-effect"),
        [not_supported("spec.taint.effect", "some-other-effect", EFFECTS)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_it_answers_upstreams_device_taint_rule_table(shared_api: client.ApiClient, case: Case) -> None:
    assert_answers(shared_api, RULE, case)


def renamed(obj: Obj) -> Obj:
    obj["metadata"]["name"] += "-update"
    return obj


def labelled(obj: Obj) -> Obj:
    obj["metadata"]["labels"] = {"a": "b"}
    return obj


def unknown_effect(obj: Obj) -> Obj:
    obj["spec"]["taint"]["effect"] = "some-other-effect"
    return obj


UPDATES: list[tuple[str, Obj, Callable[[Obj], Obj], list[Cause]]] = [
    ("valid-no-op-update", rule("valid"), lambda r: r, []),
    (
        "invalid-name-update",
        rule("valid"),
        renamed,
        [invalid("metadata.name", "valid-update", "field is immutable")],
    ),
    ("valid-existing-unknown-effect", unknown_effect(rule("valid")), labelled, []),
    (
        "invalid-new-unknown-effect",
        rule("valid"),
        unknown_effect,
        [not_supported("spec.taint.effect", "some-other-effect", EFFECTS)],
    ),
]


@pytest.mark.parametrize(("name", "old", "update", "want"), UPDATES, ids=[u[0] for u in UPDATES])
def test_it_answers_upstreams_device_taint_rule_update_table(
    name: str, old: Obj, update: Callable[[Obj], Obj], want: list[Cause]
) -> None:
    old = {**old, "metadata": {**old["metadata"], "resourceVersion": "1"}}
    causes, _ = validate(RULE, update(copy.deepcopy(old)), old)
    assert sorted((c["field"], c["reason"], c["message"]) for c in causes) == sorted(want)
