"""Consumable capacity (dra-api.md §2): request policies checked in exact quantities, and Quantity fields
read as the API server decodes them."""

from __future__ import annotations

from typing import Any

import pytest

from simcluster.validation import validate
from simcluster.validation.capacity import quantity_of
from tests.simcluster.validation_samples import (
    SLICE,
    Obj,
    a_slice,
    devices,
)


def shareable(policy: Obj) -> Obj:
    obj = a_slice()
    device = devices(obj)[0]
    device["allowMultipleAllocations"] = True
    device["capacity"]["memory"]["requestPolicy"] = policy
    return obj


@pytest.mark.parametrize(
    ("policy", "field", "fragment"),
    [
        ({"default": "10Gi", "validValues": ["10Gi", "20Gi"]}, None, None),
        ({"default": "10Gi", "validRange": {"min": "1Gi", "max": "100Gi", "step": "1Gi"}}, None, None),
        ({"validValues": ["10Gi"]}, "requestPolicy.default", "Required value"),
        ({"default": "10Gi", "validValues": ["20Gi", "10Gi"]}, "requestPolicy.validValues[1]", "ascending"),
        (
            {"default": "15Gi", "validValues": ["10Gi", "20Gi"]},
            "requestPolicy.validValues",
            "default value is not valid according to the requestPolicy",
        ),
        (
            {"default": "1Gi", "validValues": [f"{i}Gi" for i in range(1, 12)]},
            "requestPolicy.validValues",
            "Too many: 11",
        ),
        ({"default": "200Gi"}, None, None),
        (
            {"default": "10Gi", "validValues": ["10Gi", "200Gi"]},
            "requestPolicy.validValues[1]",
            "option is larger than capacity value: 141Gi",
        ),
        (
            {"default": "2Gi", "validRange": {"min": "1Gi", "step": "2Gi"}},
            "requestPolicy.validRange.step",
            "value is not a multiple of a given step (2Gi) from (1Gi)",
        ),
        (
            {"default": "1Gi", "validRange": {"min": "2Gi"}},
            "requestPolicy.validRange.default",
            "default is less than min: 2Gi",
        ),
        (
            {"default": "2Gi", "validRange": {"min": "2Gi", "max": "1Gi"}},
            "requestPolicy.validRange.max",
            "min is larger than max: 1Gi",
        ),
        (
            {"default": "2Gi", "validRange": {"min": "1Gi", "step": "0"}},
            "requestPolicy.validRange.step",
            "greater than zero",
        ),
        # quantities in messages are canonical (Quantity.String()), not a number of bytes
        (
            {"default": "140Gi", "validRange": {"min": "140Gi", "step": "2Gi"}},
            "requestPolicy.validRange.step",
            "one step 142Gi is larger than capacity value: 141Gi",
        ),
        (
            {"default": "1024Mi", "validRange": {"min": "2048Mi"}},
            "requestPolicy.validRange.default",
            "default is less than min: 2Gi",
        ),
        # a step is exact: 0.5 is a multiple of 100m, as nano-units say (no float rounding)
        ({"default": "500m", "validRange": {"min": "0", "step": "100m"}}, None, None),
    ],
)
def test_it_checks_capacity_request_policies(policy: Obj, field: str | None, fragment: str | None) -> None:
    causes, _ = validate(SLICE, shareable(policy), None)
    if field is None:
        assert causes == []
    else:
        full = f"spec.devices[0].capacity[memory].{field}"
        assert fragment is not None
        assert any(c["field"] == full and fragment in c["message"] for c in causes), causes
        assert all(c["field"].startswith("spec.devices[0].capacity[memory].requestPolicy") for c in causes)


def test_it_forbids_a_request_policy_on_an_exclusive_device() -> None:
    obj = shareable({"default": "1Gi"})
    del devices(obj)[0]["allowMultipleAllocations"]
    causes, _ = validate(SLICE, obj, None)
    assert [c["reason"] for c in causes] == ["FieldValueForbidden"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("80Gi", "80Gi"),
        ("1.5", "1500m"),
        ("100m", "100m"),
        ("2k", "2k"),
        ("1e3", "1e3"),
        (3, "3"),
        (0.5, "500m"),
        ("12 Gi", None),
        ("1Zi", None),
        (True, None),
    ],
)
def test_it_reads_quantity_fields_as_the_api_server_decodes_them(text: Any, value: str | None) -> None:
    parsed = quantity_of(text)
    assert (None if parsed is None else str(parsed)) == value
