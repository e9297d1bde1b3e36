"""ResourceClaim and ResourceClaimTemplate rules (dra-api.md §3): requests, subrequests, constraints, config,
tolerations and the allocation status; each bad claim names the field and the rule."""

from __future__ import annotations

import pytest

from simcluster.validation import validate
from tests.simcluster.validation_samples import (
    CLAIM,
    LABEL_MSG,
    SUBDOMAIN_MSG,
    TEMPLATE,
    Case,
    a_claim,
    assert_rejected,
    do_all,
    requests,
    set_path,
)

CASES = [
    Case(
        "33 requests",
        CLAIM,
        lambda o: requests(o).extend(
            {"name": f"r{i}", "exactly": {"deviceClassName": "c"}} for i in range(31)
        ),
        "spec.devices.requests",
        "FieldValueTooMany",
        "Too many: 33: must have at most 32 items",
    ),
    Case(
        "request name duplicate",
        CLAIM,
        set_path("spec.devices.requests.1.name", "gpu"),
        "spec.devices.requests[1]",
        "FieldValueDuplicate",
        'Duplicate value: "gpu"',
    ),
    Case(
        "request name not a label",
        CLAIM,
        set_path("spec.devices.requests.1.name", "NIC"),
        "spec.devices.requests[1].name",
        "FieldValueInvalid",
        LABEL_MSG,
    ),
    Case(
        "request with both shapes",
        CLAIM,
        set_path("spec.devices.requests.1.firstAvailable", [{"name": "a", "deviceClassName": "c"}]),
        "spec.devices.requests[1]",
        "FieldValueInvalid",
        "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
    ),
    Case(
        "request with neither shape",
        CLAIM,
        set_path("spec.devices.requests.1.exactly", ...),
        "spec.devices.requests[1]",
        "FieldValueRequired",
        "Required value: exactly one of `exactly` or `firstAvailable` is required",
    ),
    Case(
        "request class missing",
        CLAIM,
        set_path("spec.devices.requests.1.exactly.deviceClassName", ...),
        "spec.devices.requests[1].exactly.deviceClassName",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "allocation mode unknown",
        CLAIM,
        set_path("spec.devices.requests.1.exactly.allocationMode", "Some"),
        "spec.devices.requests[1].exactly.allocationMode",
        "FieldValueNotSupported",
        'Unsupported value: "Some": supported values: "All", "ExactCount"',
    ),
    Case(
        "count with mode All",
        CLAIM,
        do_all(
            set_path("spec.devices.requests.1.exactly.allocationMode", "All"),
            set_path("spec.devices.requests.1.exactly.count", 2),
        ),
        "spec.devices.requests[1].exactly.count",
        "FieldValueInvalid",
        "must not be specified when allocationMode is 'All'",
    ),
    Case(
        "count zero",
        CLAIM,
        set_path("spec.devices.requests.1.exactly.count", 0),
        "spec.devices.requests[1].exactly.count",
        "FieldValueInvalid",
        "Invalid value: 0: must be greater than zero",
    ),
    Case(
        "nine subrequests",
        CLAIM,
        set_path(
            "spec.devices.requests.0.firstAvailable",
            [{"name": f"s{i}", "deviceClassName": "c"} for i in range(9)],
        ),
        "spec.devices.requests[0].firstAvailable",
        "FieldValueTooMany",
        "Too many: 9: must have at most 8 items",
    ),
    Case(
        "subrequest with adminAccess",
        CLAIM,
        set_path("spec.devices.requests.0.firstAvailable.0.adminAccess", True),
        "spec.devices.requests[0].firstAvailable[0].adminAccess",
        "FieldValueInvalid",
        'unknown field "spec.devices.requests[0].firstAvailable[0].adminAccess"',
    ),
    Case(
        "subrequest name duplicate",
        CLAIM,
        set_path("spec.devices.requests.0.firstAvailable.1.name", "big"),
        "spec.devices.requests[0].firstAvailable[1]",
        "FieldValueDuplicate",
        'Duplicate value: "big"',
    ),
    Case(
        "selector without expression",
        CLAIM,
        set_path("spec.devices.requests.1.exactly.selectors", [{"cel": {}}]),
        "spec.devices.requests[1].exactly.selectors[0].cel.expression",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "17 tolerations",
        CLAIM,
        set_path("spec.devices.requests.1.exactly.tolerations", [{"operator": "Exists"}] * 17),
        "spec.devices.requests[1].exactly.tolerations",
        "FieldValueTooMany",
        "Too many: 17: must have at most 16 items",
    ),
    Case(
        "toleration operator unknown",
        CLAIM,
        set_path("spec.devices.requests.1.exactly.tolerations.0.operator", "In"),
        "spec.devices.requests[1].exactly.tolerations[0].operator",
        "FieldValueNotSupported",
        'Unsupported value: "In": supported values: "Equal", "Exists"',
    ),
    Case(
        "toleration Exists with value",
        CLAIM,
        set_path("spec.devices.requests.1.exactly.tolerations.0.value", "x"),
        "spec.devices.requests[1].exactly.tolerations[0].value",
        "FieldValueInvalid",
        "must be empty for operator `Exists`",
    ),
    Case(
        "toleration empty key with Equal",
        CLAIM,
        set_path("spec.devices.requests.1.exactly.tolerations", [{"operator": "Equal", "value": "x"}]),
        "spec.devices.requests[1].exactly.tolerations[0].operator",
        "FieldValueInvalid",
        "operator must be Exists when `key` is empty",
    ),
    Case(
        "toleration effect PreferNoSchedule",
        CLAIM,
        set_path("spec.devices.requests.1.exactly.tolerations.0.effect", "PreferNoSchedule"),
        "spec.devices.requests[1].exactly.tolerations[0].effect",
        "FieldValueNotSupported",
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"',
    ),
    Case(
        "constraint with both attributes",
        CLAIM,
        set_path("spec.devices.constraints.0.distinctAttribute", "example.com/x"),
        "spec.devices.constraints[0]",
        "FieldValueInvalid",
        "but multiple fields are set",
    ),
    Case(
        "constraint with no attribute",
        CLAIM,
        set_path("spec.devices.constraints.0.matchAttribute", ...),
        "spec.devices.constraints[0]",
        "FieldValueRequired",
        'exactly one of "matchAttribute" or "distinctAttribute" is required',
    ),
    Case(
        "constraint attribute not qualified",
        CLAIM,
        set_path("spec.devices.constraints.0.matchAttribute", "numaNode"),
        "spec.devices.constraints[0].matchAttribute",
        "FieldValueInvalid",
        "a fully qualified name must be a domain and a name separated by a slash",
    ),
    Case(
        "constraint unknown request",
        CLAIM,
        set_path("spec.devices.constraints.0.requests", ["gpu", "fpga"]),
        "spec.devices.constraints[0].requests[1]",
        "FieldValueInvalid",
        "must be the name of a request in the claim",
    ),
    Case(
        "constraint subrequest reference ok but unknown sub",
        CLAIM,
        set_path("spec.devices.constraints.0.requests", ["gpu/huge"]),
        "spec.devices.constraints[0].requests[0]",
        "FieldValueInvalid",
        "must be the name of a request in the claim",
    ),
    Case(
        "33 constraints",
        CLAIM,
        set_path("spec.devices.constraints", [{"matchAttribute": "example.com/x"}] * 33),
        "spec.devices.constraints",
        "FieldValueTooMany",
        "Too many: 33: must have at most 32 items",
    ),
    Case(
        "config unknown request",
        CLAIM,
        set_path(
            "spec.devices.config",
            [{"requests": ["tpu"], "opaque": {"driver": "gpu.example.com", "parameters": {}}}],
        ),
        "spec.devices.config[0].requests[0]",
        "FieldValueInvalid",
        "must be the name of a request in the claim",
    ),
    Case(
        "config driver bad",
        CLAIM,
        set_path("spec.devices.config", [{"opaque": {"driver": "gpu_driver", "parameters": {}}}]),
        "spec.devices.config[0].opaque.driver",
        "FieldValueInvalid",
        SUBDOMAIN_MSG,
    ),
    Case(
        "config without parameters",
        CLAIM,
        set_path("spec.devices.config", [{"opaque": {"driver": "gpu.example.com"}}]),
        "spec.devices.config[0].opaque.parameters",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "template metadata name",
        TEMPLATE,
        set_path("spec.metadata.name", "x"),
        "spec.metadata.name",
        "FieldValueForbidden",
        "Forbidden: cannot be set",
    ),
    Case(
        "template request bad",
        TEMPLATE,
        set_path("spec.spec.devices.requests.1.exactly.count", -1),
        "spec.spec.devices.requests[1].exactly.count",
        "FieldValueInvalid",
        "must be greater than zero",
    ),
    Case(
        "config parameters a list",
        CLAIM,
        set_path("spec.devices.config", [{"opaque": {"driver": "gpu.example.com", "parameters": []}}]),
        "spec.devices.config[0].opaque.parameters",
        "FieldValueInvalid",
        "must be a valid JSON object",
    ),
    Case(
        "derived attribute not used by a constraint",
        CLAIM,
        set_path(
            "spec.devices.requests.1.exactly.derivedAttributes",
            [{"name": "example.com/numa", "expression": "1"}],
        ),
        "spec.devices.requests[1].exactly.derivedAttributes[0].name",
        "FieldValueInvalid",
        "must be referenced by at least one matchAttribute or distinctAttribute constraint",
    ),
    Case(
        "derived attribute expression does not compile",
        CLAIM,
        do_all(
            set_path(
                "spec.devices.requests.1.exactly.derivedAttributes",
                [{"name": "example.com/numa", "expression": "device.driver =="}],
            ),
            set_path("spec.devices.constraints", [{"matchAttribute": "example.com/numa"}]),
        ),
        "spec.devices.requests[1].exactly.derivedAttributes[0].expression",
        "FieldValueInvalid",
        "device.driver ==",
    ),
    Case(
        "reference with two slashes",
        CLAIM,
        set_path("spec.devices.constraints.0.requests", ["gpu/big/x"]),
        "spec.devices.constraints[0].requests[0]",
        "FieldValueInvalid",
        "must be the name of a request in the claim",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_it_rejects_the_bad_claim_or_template_naming_field_and_rule(case: Case) -> None:
    assert_rejected(case)


def test_it_accepts_subrequest_references_in_constraints_and_config() -> None:
    claim = a_claim()
    claim["spec"]["devices"]["constraints"] = [
        {"requests": ["gpu/big", "nic"], "matchAttribute": "resource.kubernetes.io/numaNode"}
    ]
    claim["spec"]["devices"]["config"] = [
        {
            "requests": ["gpu/small"],
            "opaque": {"driver": "gpu.example.com", "parameters": {"sharing": "time"}},
        }
    ]
    assert validate(CLAIM, claim, None)[0] == []


def test_it_reports_several_problems_at_once() -> None:
    claim = a_claim()
    requests(claim)[1]["exactly"]["count"] = 0
    requests(claim)[1]["exactly"]["tolerations"][0]["operator"] = "In"
    fields = {c["field"] for c in validate(CLAIM, claim, None)[0]}
    assert fields == {
        "spec.devices.requests[1].exactly.count",
        "spec.devices.requests[1].exactly.tolerations[0].operator",
    }
