"""What an administrator writes (dra-api.md §2–§4): DeviceClass, DeviceTaintRule and
ResourcePoolStatusRequest; each bad object names the field and the rule."""

from __future__ import annotations

import pytest

from simcluster.validation import validate
from tests.simcluster.validation_samples import (
    CLASS,
    LABEL_MSG,
    LONG_CEL,
    POOL_REQUEST,
    RULE,
    SUBDOMAIN_MSG,
    Case,
    a_rule,
    assert_rejected,
    set_path,
)

CASES = [
    Case(
        "class selector without cel",
        CLASS,
        set_path("spec.selectors", [{}]),
        "spec.selectors[0].cel",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "class selector empty expression",
        CLASS,
        set_path("spec.selectors.0.cel.expression", ""),
        "spec.selectors[0].cel.expression",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "class selector too long",
        CLASS,
        set_path("spec.selectors.0.cel.expression", LONG_CEL),
        "spec.selectors[0].cel.expression",
        "FieldValueTooLong",
        "may not be more than 10240 bytes",
    ),
    Case(
        "class selector unbalanced",
        CLASS,
        set_path("spec.selectors.0.cel.expression", 'device.attributes["x"'),
        "spec.selectors[0].cel.expression",
        "FieldValueInvalid",
        "compilation failed",
    ),
    Case(
        "class 33 selectors",
        CLASS,
        set_path("spec.selectors", [{"cel": {"expression": "true"}}] * 33),
        "spec.selectors",
        "FieldValueTooMany",
        "Too many: 33: must have at most 32 items",
    ),
    Case(
        "class 33 configs",
        CLASS,
        set_path("spec.config", [{"opaque": {"driver": "gpu.example.com", "parameters": {}}}] * 33),
        "spec.config",
        "FieldValueTooMany",
        "Too many: 33: must have at most 32 items",
    ),
    Case(
        "class config parameters too big",
        CLASS,
        set_path(
            "spec.config", [{"opaque": {"driver": "gpu.example.com", "parameters": {"blob": "x" * 10240}}}]
        ),
        "spec.config[0].opaque.parameters",
        "FieldValueTooLong",
        "may not be more than 10240 bytes",
    ),
    Case(
        "class extended resource without domain",
        CLASS,
        set_path("spec.extendedResourceName", "gpu"),
        "spec.extendedResourceName",
        "FieldValueInvalid",
        "must be a valid extended resource name",
    ),
    Case(
        "class extended resource in kubernetes.io",
        CLASS,
        set_path("spec.extendedResourceName", "kubernetes.io/gpu"),
        "spec.extendedResourceName",
        "FieldValueInvalid",
        "kubernetes.io",
    ),
    Case(
        "class extended resource of another class",
        CLASS,
        set_path("spec.extendedResourceName", "deviceclass.resource.kubernetes.io/other"),
        "spec.extendedResourceName",
        "FieldValueInvalid",
        "must be a valid extended resource name",
    ),
    Case(
        "rule without taint",
        RULE,
        set_path("spec.taint", ...),
        "spec.taint",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "rule effect PreferNoSchedule",
        RULE,
        set_path("spec.taint.effect", "PreferNoSchedule"),
        "spec.taint.effect",
        "FieldValueNotSupported",
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
    ),
    Case(
        "rule effect missing",
        RULE,
        set_path("spec.taint.effect", ...),
        "spec.taint.effect",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "rule selector driver bad",
        RULE,
        set_path("spec.deviceSelector.driver", "Bad_Driver"),
        "spec.deviceSelector.driver",
        "FieldValueInvalid",
        SUBDOMAIN_MSG,
    ),
    Case(
        "rule selector device bad",
        RULE,
        set_path("spec.deviceSelector.device", "GPU_0"),
        "spec.deviceSelector.device",
        "FieldValueInvalid",
        LABEL_MSG,
    ),
    Case(
        # v1.37 tells a name that would be a valid subdomain what it lacks rather than the whole rule
        "rule selector device with a dot",
        RULE,
        set_path("spec.deviceSelector.device", "gpu.0"),
        "spec.deviceSelector.device",
        "FieldValueInvalid",
        "must not contain dots",
    ),
    Case(
        "rule selector CEL tombstoned",
        RULE,
        set_path("spec.deviceSelector.selectors", []),
        "spec.deviceSelector.selectors",
        "FieldValueInvalid",
        "unknown field",
    ),
    Case(
        "rule nine conditions",
        RULE,
        set_path(
            "status",
            {
                "conditions": [
                    {
                        "type": f"T{i}",
                        "status": "True",
                        "reason": "R",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                    for i in range(9)
                ]
            },
        ),
        "status.conditions",
        "FieldValueTooMany",
        "Too many: 9: must have at most 8 items",
    ),
    Case(
        "rule condition status bad",
        RULE,
        set_path(
            "status",
            {
                "conditions": [
                    {
                        "type": "EvictionInProgress",
                        "status": "Yes",
                        "reason": "R",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ]
            },
        ),
        "status.conditions[0].status",
        "FieldValueNotSupported",
        'supported values: "False", "True", "Unknown"',
    ),
    # Python's `$` matches before a final newline, Go's does not: formats are matched whole
    Case(
        "rule condition reason with a trailing newline",
        RULE,
        set_path(
            "status",
            {
                "conditions": [
                    {
                        "type": "EvictionInProgress",
                        "status": "True",
                        "reason": "Pending\n",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ]
            },
        ),
        "status.conditions[0].reason",
        "FieldValueInvalid",
        "a condition reason must start with alphabetic character",
    ),
    Case(
        "rule condition time with a trailing newline",
        RULE,
        set_path(
            "status",
            {
                "conditions": [
                    {
                        "type": "EvictionInProgress",
                        "status": "True",
                        "reason": "Pending",
                        "lastTransitionTime": "2026-01-01T00:00:00Z\n",
                    }
                ]
            },
        ),
        "status.conditions[0].lastTransitionTime",
        "FieldValueInvalid",
        "must be an RFC 3339 date-time",
    ),
    Case(
        "pool request without driver",
        POOL_REQUEST,
        set_path("spec.driver", ...),
        "spec.driver",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "pool request limit zero",
        POOL_REQUEST,
        set_path("spec.limit", 0),
        "spec.limit",
        "FieldValueInvalid",
        "Invalid value: 0: must be at least 1",
    ),
    Case(
        "pool request limit too high",
        POOL_REQUEST,
        set_path("spec.limit", 1001),
        "spec.limit",
        "FieldValueInvalid",
        "Invalid value: 1001: must not exceed 1000",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_it_rejects_the_bad_class_rule_or_pool_request_naming_field_and_rule(case: Case) -> None:
    assert_rejected(case)


def test_it_warns_but_accepts_an_empty_device_selector() -> None:
    rule = a_rule()
    rule["spec"]["deviceSelector"] = {}
    causes, warnings = validate(RULE, rule, None)
    assert causes == []
    assert len(warnings) == 1
    assert "deviceSelector" in warnings[0]
    assert "matches all devices" in warnings[0]


def test_it_accepts_a_rule_without_selector_silently() -> None:
    rule = a_rule()
    del rule["spec"]["deviceSelector"]
    assert validate(RULE, rule, None) == ([], [])
