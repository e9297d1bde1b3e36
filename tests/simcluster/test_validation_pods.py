"""The Pod fields around DRA: resource claims, containers and their claims, tolerations; each bad pod names
the field and the rule."""

from __future__ import annotations

import pytest

from tests.simcluster.validation_samples import (
    POD,
    Case,
    assert_rejected,
    set_path,
)

CASES = [
    Case(
        "pod without containers",
        POD,
        set_path("spec.containers", []),
        "spec.containers",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "pod container without name",
        POD,
        set_path("spec.containers.0.name", ""),
        "spec.containers[0].name",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "pod container without image",
        POD,
        set_path("spec.containers.0.image", ...),
        "spec.containers[0].image",
        "FieldValueRequired",
        "Required value",
    ),
    Case(
        "pod claim with both sources",
        POD,
        set_path("spec.resourceClaims.0.resourceClaimName", "c"),
        "spec.resourceClaims[0]",
        "FieldValueInvalid",
        "at most one of `resourceClaimName` or `resourceClaimTemplateName`",
    ),
    Case(
        "pod claim with no source",
        POD,
        set_path("spec.resourceClaims.0.resourceClaimTemplateName", ...),
        "spec.resourceClaims[0]",
        "FieldValueInvalid",
        "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
    ),
    Case(
        "pod container uses unknown claim",
        POD,
        set_path("spec.containers.0.resources.claims.0.name", "tpus"),
        "spec.containers[0].resources.claims[0].name",
        "FieldValueNotSupported",
        'Unsupported value: "tpus": supported values: "gpus"',
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_it_rejects_the_bad_pod_naming_field_and_rule(case: Case) -> None:
    assert_rejected(case)
