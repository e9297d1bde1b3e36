"""Upstream's allocator table, ported: list-type attributes (DRAListTypeAttributes) in ``matchAttribute``
(the devices share a common element) and ``distinctAttribute`` (the devices' values are pairwise
disjoint) constraints, and attributes without a value type."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dra.upstream_cases import (
    BOOL,
    CLASS_A,
    DRIVER_A,
    NODE_1,
    NUMA,
    STRING,
    UNSCHEDULABLE,
    VERSION,
    Error,
    J,
    Ported,
    alloc,
    case_ids,
    check,
    dev,
    distinct,
    features,
    local,
    match,
    req,
    res,
    rslice,
    uclaim,
)

LISTS = features("ListTypeAttributes")
LISTS_CC = features("ListTypeAttributes", "ConsumableCapacity")
NAMES = {NUMA: "numa", VERSION: "driverVersion", STRING: "stringAttribute", BOOL: "boolAttribute"}


def _devices(attribute: str, values: list[dict[str, Any]]) -> list[J]:
    short = NAMES[attribute]
    return [
        rslice(
            "slice-1",
            NODE_1,
            "pool-1",
            DRIVER_A,
            *(dev(f"device-{n + 1}", attrs={short: x}) for n, x in enumerate(values)),
        )
    ]


def _case(
    name: str,
    upstream: str,
    constraint: J,
    values: list[dict[str, Any]],
    count: int,
    takes: tuple[int, ...] | None,
    feats: frozenset[str] = LISTS,
) -> Ported:
    """``count`` devices of one request under ``constraint`` over devices with these attribute values;
    ``takes`` the device numbers upstream allocates, None for unschedulable."""
    attribute = str(constraint.get("matchAttribute") or constraint.get("distinctAttribute"))
    return Ported(
        name,
        upstream,
        features=feats,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, count), constraints=[constraint])],
        slices=_devices(attribute, values),
        expect=UNSCHEDULABLE
        if takes is None
        else [alloc(local(), *(res("req-0", DRIVER_A, "pool-1", f"device-{n}") for n in takes))],
    )


def ss(*values: str) -> dict[str, Any]:
    return {"strings": list(values)}


def one(value: str) -> dict[str, Any]:
    return {"string": value}


M = "list-attributes-match-constaint-"
D = "list-attributes-distinct-constraint-"
CASES: list[Ported] = [
    # ------------------------------------------------------------------ matchAttribute
    _case(
        "equal_scalars_match",
        f"{M}scalar-string-values",
        match(STRING),
        [one("value1"), one("value1")],
        2,
        (1, 2),
    ),
    _case(
        "lists_with_a_common_element_match",
        f"{M}list-of-string-values-with-common-elements",
        match(STRING),
        [ss("value1", "value2", "value3"), ss("value2", "value3", "value4")],
        2,
        (1, 2),
    ),
    _case(
        "pairwise_overlap_without_an_element_common_to_all_does_not_match",
        f"{M}list-of-string-values-with-partially-common-elements",
        match(STRING),
        [ss("value1", "value2"), ss("value2", "value3"), ss("value3", "value1")],
        3,
        None,
    ),
    Ported(
        "disjoint_lists_do_not_match",
        f"{M}list-of-string-values-without-common-elements",
        features=LISTS,
        claims=[uclaim("claim-0", req("req-0", CLASS_A), req("req-0", CLASS_A), constraints=[match(STRING)])],
        slices=_devices(STRING, [ss("value1", "value2"), ss("value3", "value4")]),
        expect=UNSCHEDULABLE,
    ),
    _case(
        "a_scalar_matches_a_list_containing_it",
        f"{M}mixed-scalar-and-list-of-string-values-with-common-elements",
        match(STRING),
        [one("value1"), ss("value1", "value2")],
        2,
        (1, 2),
    ),
    _case(
        "a_scalar_and_lists_without_an_element_common_to_all_do_not_match",
        f"{M}mixed-scalar-and-list-of-string-values-with-partially-common-elements",
        match(STRING),
        [one("value1"), ss("value1", "value2"), ss("value2", "value3")],
        3,
        None,
    ),
    _case(
        "a_scalar_does_not_match_a_list_without_it",
        f"{M}mixed-scalar-and-list-of-string-values-without-common-elements",
        match(STRING),
        [one("value1"), ss("value2", "value3")],
        2,
        None,
    ),
    _case(
        "int_lists_with_a_common_element_match",
        f"{M}list-of-int-values-with-common-elements",
        match(NUMA),
        [{"ints": [0, 1, 2]}, {"ints": [1, 2, 3]}],
        2,
        (1, 2),
    ),
    _case(
        "bool_lists_with_a_common_element_match",
        f"{M}list-of-bool-values-with-common-elements",
        match(BOOL),
        [{"bools": [True, False]}, {"bools": [True]}],
        2,
        (1, 2),
    ),
    _case(
        "version_lists_with_a_common_element_match",
        f"{M}list-of-version-values-with-common-elements",
        match(VERSION),
        [{"versions": ["1.0.0", "1.1.0", "2.0.0"]}, {"versions": ["1.1.0", "2.0.0", "2.1.0"]}],
        2,
        (1, 2),
    ),
    Ported(
        "an_attribute_without_a_value_type_is_an_error",
        f"{M}with-empty-or-unknown-type",
        features=LISTS,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2), constraints=[match(STRING)])],
        slices=_devices(STRING, [{}, ss()]),
        expect=Error("unsupported attribute value"),
    ),
    _case(
        "without_the_feature_lists_do_not_match",
        "list-attributes-disabled-match-constraint-with-lists",
        match(STRING),
        [ss("value1", "value2", "value3"), ss("value2", "value3", "value4")],
        2,
        None,
        frozenset(),
    ),
    # ------------------------------------------------------------------ distinctAttribute
    _case(
        "different_scalars_are_distinct",
        f"{D}scalar-string-values-all-distinct",
        distinct(STRING),
        [one("value1"), one("value2")],
        2,
        (1, 2),
        LISTS_CC,
    ),
    _case(
        "equal_scalars_are_not_distinct",
        f"{D}scalar-string-values-not-distinct",
        distinct(STRING),
        [one("value1"), one("value1")],
        2,
        None,
        LISTS_CC,
    ),
    _case(
        "disjoint_lists_are_distinct",
        f"{D}list-of-string-values-all-distinct",
        distinct(STRING),
        [ss("value1", "value2"), ss("value2", "value3"), ss("value3", "value4")],
        2,
        (1, 3),
        LISTS_CC,
    ),
    _case(
        "overlapping_lists_are_not_distinct",
        f"{D}list-of-string-values-with-common-elements",
        distinct(STRING),
        [ss("value1", "value2", "value3"), ss("value2", "value4", "value5")],
        2,
        None,
        LISTS_CC,
    ),
    _case(
        "a_scalar_is_distinct_from_a_list_without_it",
        f"{D}mixed-scalar-and-list-all-distinct",
        distinct(STRING),
        [one("value1"), ss("value1", "value2"), ss("value2", "value3")],
        2,
        (1, 3),
        LISTS_CC,
    ),
    _case(
        "a_scalar_is_not_distinct_from_a_list_with_it",
        f"{D}mixed-scalar-and-list-with-common-elements",
        distinct(STRING),
        [one("value1"), ss("value1", "value2")],
        2,
        None,
        LISTS_CC,
    ),
    _case(
        "disjoint_int_lists_are_distinct",
        f"{D}list-of-int-values-all-distinct",
        distinct(NUMA),
        [{"ints": [0, 1]}, {"ints": [1, 2]}, {"ints": [2, 3]}],
        2,
        (1, 3),
        LISTS_CC,
    ),
    _case(
        "disjoint_bool_lists_are_distinct",
        f"{D}list-of-bool-values-all-distinct",
        distinct(BOOL),
        [{"bools": [True]}, {"bools": [True, False]}, {"bools": [False]}],
        2,
        (1, 3),
        LISTS_CC,
    ),
    _case(
        "disjoint_version_lists_are_distinct",
        f"{D}list-of-version-values-all-distinct",
        distinct(VERSION),
        [
            {"versions": ["1.0.0", "1.1.0"]},
            {"versions": ["1.1.0", "2.0.0"]},
            {"versions": ["2.0.0", "2.1.0"]},
        ],
        2,
        (1, 3),
        LISTS_CC,
    ),
    Ported(
        "a_list_attribute_without_a_value_is_an_error",
        "list-attributes-distinct-constaint-with-empty-or-unknown-type",
        features=LISTS_CC,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2), constraints=[distinct(VERSION)])],
        slices=_devices(VERSION, [{"versions": []}, {"versions": None}]),
        expect=Error("unsupported attribute value"),
    ),
    _case(
        "without_the_feature_lists_are_not_distinct",
        "list-attributes-disabled-distinct-constraint-with-lists",
        distinct(STRING),
        [ss("value1", "value2", "value3"), ss("value2", "value3", "value4")],
        2,
        None,
        features("ConsumableCapacity"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_it_gives_upstreams_answer(case: Ported) -> None:
    check(case)
