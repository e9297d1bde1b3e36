"""Upstream's TestValidateClass and TestValidateClassUpdate tables (validation_deviceclass_test.go, stored
version 16913111), case by case through a running simcluster (updates through `validate`, as their old objects
could not be created).

Left out or changed: resource-version (a create with resourceVersion set is refused before validation, as
by kube-apiserver's storage); in "configuration", entry 2 (parameters that are not JSON cannot be sent inside
a JSON body) and entry 7 (10 KiB + 1 of parameters as upstream spells them: kube-apiserver measures the bytes
as sent, simcluster the compact re-serialization, so a client that sends spaces gets that much leeway — a
known difference; kubectl sends compact JSON)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from simcluster.validation import validate
from tests.simcluster.upstream_validation import (
    Case,
    assert_answers,
    invalid,
    metadata_cases,
    required,
    too_long,
    too_many,
)
from tests.simcluster.validation_samples import CLASS, Obj

MAX_PARAMETERS = 10 * 1024
VALID_CONFIG = {"opaque": {"driver": "foo", "parameters": {"foo": 42}}}
LARGEST_PARAMETERS = {"str": "x" * (MAX_PARAMETERS - 9 - 2)}  # {"str": "…"} as upstream spells it: 10 KiB
TRUE_SELECTOR = {"cel": {"expression": "true"}}


def device_class(name: str = "foo", **spec: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name} if name else {},
        "spec": spec,
    }


CASES = [
    *metadata_cases("good-class", device_class),
    Case("good-extended-resource-name", lambda: device_class(extendedResourceName="example.com/gpu")),
    Case(
        "bad-extended-resource-name",
        lambda: device_class(extendedResourceName="example.com"),
        [invalid("spec.extendedResourceName", "example.com", "must be a valid extended resource name")],
    ),
    Case(
        "selectors",
        lambda: device_class(
            selectors=[TRUE_SELECTOR, {}, {"cel": {"expression": "noSuchVar"}}] + [TRUE_SELECTOR] * 29
        ),
        [
            required("spec.selectors[1].cel"),
            invalid(
                "spec.selectors[2].cel.expression",
                "noSuchVar",
                "compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')\n"
                " | noSuchVar\n"
                " | ^",
            ),
        ],
    ),
    Case(
        "too-many-selectors",
        lambda: device_class(selectors=[TRUE_SELECTOR] * 33),
        [too_many("spec.selectors", 33, 32)],
    ),
    Case(
        "configuration",
        lambda: device_class(
            config=[
                VALID_CONFIG,
                {"opaque": {}},
                VALID_CONFIG,  # upstream: parameters `xxx`, which no JSON body can carry
                {"opaque": {"driver": "foo", "parameters": "hello-world"}},
                {"opaque": {"driver": "foo", "parameters": None}},
                {},
                {"opaque": {"driver": "foo", "parameters": LARGEST_PARAMETERS}},
            ]
            + [VALID_CONFIG] * 25
        ),
        [
            required("spec.config[1].opaque.driver"),
            required("spec.config[1].opaque.parameters"),
            invalid("spec.config[3].opaque.parameters", "<value omitted>", "must be a valid JSON object"),
            required("spec.config[4].opaque.parameters"),
            required("spec.config[5].opaque"),
        ],
    ),
    Case(
        "too-many-configs",
        lambda: device_class(config=[VALID_CONFIG] * 33),
        [too_many("spec.config", 33, 32)],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_it_answers_upstreams_device_class_table(shared_api: client.ApiClient, case: Case) -> None:
    assert_answers(shared_api, CLASS, case)


def config_of(parameters: Any) -> Obj:
    return device_class(config=[{"opaque": {"driver": "foo", "parameters": parameters}}])


TOO_LARGE = {"str": "x" * (MAX_PARAMETERS + 1)}

UPDATES = [
    ("valid-no-op-update", device_class(), lambda c: c, []),
    ("valid-config-large", device_class(), lambda c: config_of(LARGEST_PARAMETERS), []),
    (
        "invalid-config-too-large",
        device_class(),
        lambda c: config_of(TOO_LARGE),
        [too_long("spec.config[0].opaque.parameters", MAX_PARAMETERS)],
    ),
    ("too-large-config-valid-if-stored", config_of(TOO_LARGE), lambda c: c, []),
]


@pytest.mark.parametrize(("name", "old", "update", "want"), UPDATES, ids=[u[0] for u in UPDATES])
def test_it_answers_upstreams_device_class_update_table(
    name: str, old: Obj, update: Callable[[Obj], Obj], want: list[tuple[str, str, str]]
) -> None:
    old = {**old, "metadata": {**old["metadata"], "resourceVersion": "1"}}
    causes, _ = validate(CLASS, update(copy.deepcopy(old)), old)
    assert sorted((c["field"], c["reason"], c["message"]) for c in causes) == sorted(want)
