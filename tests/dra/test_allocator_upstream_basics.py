"""Upstream's allocator table, ported: the basics — first fit, node-local and network-attached devices,
in-use devices, claim validation errors, constraints, configuration, and the search order."""

from __future__ import annotations

import pytest

from tests.dra.upstream_cases import (
    ALL_NODES,
    BOOL,
    CLASS_A,
    CLASS_A_OBJ,
    CLASS_B,
    CLASS_B_OBJ,
    DRIVER_A,
    DRIVER_B,
    MISSING,
    NODE_1,
    NODE_2,
    NODE_2_OBJ,
    NUMA,
    STRING,
    UNSCHEDULABLE,
    VERSION,
    Error,
    Ported,
    alloc,
    b,
    case_ids,
    check,
    claim_config,
    dev,
    device_class,
    devs,
    features,
    from_claim,
    from_class,
    i,
    labels,
    local,
    many,
    match,
    memory_at_least,
    one_device,
    req,
    res,
    rslice,
    s,
    uclaim,
    v,
)

ONE_DEVICE = [one_device("slice-1", NODE_1, "pool-1", DRIVER_A)]
SMALL_THEN_LARGE = [
    uclaim(
        "claim-0",
        req("req-0", CLASS_A, 1, memory_at_least("1Gi")),
        req("req-1", CLASS_A, 1, memory_at_least("2Gi")),
    )
]
ALL_FOUR_MATCH = {
    "driverVersion": v("1.0.0"),
    "numa": i(1),
    "stringAttribute": s("stringAttributeValue"),
    "boolAttribute": b(True),
}
ADMIN = features("AdminAccess")


def _two(name: str, attribute: str, first: dict, second: dict) -> Ported:
    """Two devices whose ``attribute`` differs, a matchAttribute on it, one request for both."""
    return Ported(
        name,
        f"with-constraint-not-matching-{attribute}-attribute",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2), constraints=[match(first["name"])])],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", attrs=first["a"]),
                dev("device-2", attrs=second),
            )
        ],
        expect=UNSCHEDULABLE,
    )


CASES: list[Ported] = [
    # ------------------------------------------------------------------ first fit
    Ported("nothing_to_do_gives_no_results", "empty", classes=()),
    Ported(
        "allocates_the_one_device_of_the_node",
        "simple",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=ONE_DEVICE,
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "takes_only_devices_published_for_this_node",
        "other-node",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
            one_device("slice-2", NODE_2, "pool-2", DRIVER_A),
        ],
        node=NODE_2_OBJ,
        expect=[alloc(local(NODE_2), res("req-0", DRIVER_A, "pool-2", "device-1"))],
    ),
    Ported(
        "gives_a_small_and_a_large_device_to_small_and_large_requests",
        "small-and-large",
        claims=SMALL_THEN_LARGE,
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", capacity={"memory": "1Gi"}),
                dev("device-2", capacity={"memory": "2Gi"}),
            )
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1", DRIVER_A, "pool-1", "device-2"),
            )
        ],
    ),
    Ported(
        "backtracks_when_the_small_request_took_the_large_device",
        "small-and-large-backtrack-requests",
        claims=SMALL_THEN_LARGE,
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-2", capacity={"memory": "2Gi"}),
                dev("device-1", capacity={"memory": "1Gi"}),
            )
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1", DRIVER_A, "pool-1", "device-2"),
            )
        ],
    ),
    Ported(
        "backtracks_across_claims",
        "small-and-large-backtrack-claims",
        claims=[
            uclaim("claim-0", req("req-0", CLASS_A, 1, memory_at_least("1Gi"))),
            uclaim("claim-1", req("req-1", CLASS_A, 1, memory_at_least("2Gi"))),
        ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-2", capacity={"memory": "2Gi"}),
                dev("device-1", capacity={"memory": "1Gi"}),
            )
        ],
        expect=[
            alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1")),
            alloc(local(), res("req-1", DRIVER_A, "pool-1", "device-2")),
        ],
    ),
    Ported(
        "takes_one_request_from_devices_in_two_pools",
        "devices-split-across-different-slices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_A),
            one_device("slice-2", NODE_1, "pool-2", DRIVER_A),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-0", DRIVER_A, "pool-2", "device-1"),
            )
        ],
    ),
    Ported(
        "no_slices_is_unschedulable",
        "no-slices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "two_claims_cannot_share_one_device",
        "not-enough-suitable-devices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A)), uclaim("claim-0", req("req-1", CLASS_A))],
        slices=ONE_DEVICE,
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "no_claims_gives_no_results",
        "no-claims-to-allocate",
        slices=ONE_DEVICE,
    ),
    Ported(
        "fills_the_claim_limit_of_32_devices",
        "max-number-devices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 32))],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(32))],
        expect=[alloc(local(), *many("req-0", DRIVER_A, "pool-1", 32))],
    ),
    Ported(
        "gives_each_claim_a_device_of_its_drivers_class",
        "several-different-drivers",
        claims=[uclaim("claim-0", req("req-0", CLASS_A)), uclaim("claim-0", req("req-0", CLASS_B))],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1)),
            one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
        ],
        expect=[
            alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1")),
            alloc(local(), res("req-0", DRIVER_B, "pool-1", "device-1")),
        ],
    ),
    Ported(
        "a_device_in_use_is_not_allocated_again",
        "already-allocated-devices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        allocated=[(DRIVER_A, "pool-1", "device-1"), (DRIVER_A, "pool-1", "device-2")],
        slices=ONE_DEVICE,
        expect=UNSCHEDULABLE,
    ),
    # ------------------------------------------------------------------ network-attached devices
    Ported(
        "a_slice_for_a_region_gives_that_node_selector",
        "network-attached-device",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[one_device("slice-1", labels("region", "region-1"), "pool-1", DRIVER_A)],
        expect=[alloc(labels("region", "region-1"), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "a_slice_for_another_region_is_not_visible",
        "unsuccessful-allocation-network-attached-device",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[one_device("slice-1", labels("region", "region-1"), "pool-1", DRIVER_A)],
        node=NODE_2_OBJ,
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "the_node_selector_is_the_union_of_the_slices_selectors",
        "many-network-attached-devices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 4))],
        slices=[
            one_device("slice-1", labels("region", "region-1"), "pool-1", DRIVER_A),
            one_device("slice-1", ALL_NODES, "pool-2", DRIVER_A),
            one_device("slice-1", labels("planet", "earth"), "pool-3", DRIVER_A),
            one_device("slice-1", local(), "pool-4", DRIVER_A),
        ],
        expect=[
            alloc(
                {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "region", "operator": "In", "values": ["region-1"]},
                                {"key": "planet", "operator": "In", "values": ["earth"]},
                            ],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE_1]}],
                        }
                    ]
                },
                *(res("req-0", DRIVER_A, f"pool-{n}", "device-1") for n in range(1, 5)),
            )
        ],
    ),
    Ported(
        "one_node_local_device_makes_the_selector_that_node",
        "local-and-network-attached-devices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            one_device("slice-1", labels("region", "region-1"), "pool-1", DRIVER_A),
            one_device("slice-1", NODE_1, "pool-2", DRIVER_A),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-0", DRIVER_A, "pool-2", "device-1"),
            )
        ],
    ),
    # ------------------------------------------------------------------ admin access
    Ported(
        "admin_access_needs_its_feature",
        "admin-access-disabled",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, admin=True))],
        slices=ONE_DEVICE,
        expect=Error("claim claim-0, request req-0: admin access is requested, but the feature is disabled"),
    ),
    Ported(
        "admin_access_takes_a_device_in_use",
        "admin-access-enabled",
        features=ADMIN,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, admin=True))],
        allocated=[(DRIVER_A, "pool-1", "device-1"), (DRIVER_A, "pool-1", "device-2")],
        slices=ONE_DEVICE,
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1", admin=True))],
    ),
    Ported(
        "admin_access_counts_devices_in_use",
        "count-devices-some-allocated-admin-access",
        features=ADMIN,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2, admin=True))],
        allocated=[(DRIVER_A, "pool-1", "device-1")],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1))],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1", admin=True),
                res("req-0", DRIVER_A, "pool-1", "device-2", admin=True),
            )
        ],
    ),
    Ported(
        "two_admin_claims_share_a_device",
        "separate-claims-share-device-admin-access",
        features=ADMIN,
        claims=[
            uclaim("claim-0", req("req-0", CLASS_A, admin=True)),
            uclaim("claim-1", req("req-0", CLASS_A, admin=True)),
        ],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1))],
        expect=[
            alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1", admin=True)),
            alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1", admin=True)),
        ],
    ),
    Ported(
        "an_admin_claim_takes_a_device_another_claim_is_getting",
        "admin-access-claims-device-allocating-for-non-admin-access",
        features=ADMIN,
        claims=[
            uclaim("claim-0", req("req-0", CLASS_A)),
            uclaim("claim-1", req("req-0", CLASS_A, admin=True)),
        ],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1))],
        expect=[
            alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1")),
            alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1", admin=True)),
        ],
    ),
    # ------------------------------------------------------------------ errors in claims and classes
    Ported(
        "a_missing_class_is_an_error",
        "no-classes",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        classes=(),
        slices=ONE_DEVICE,
        expect=Error("could not retrieve device class class-a"),
    ),
    Ported(
        "an_unknown_class_is_an_error",
        "unknown-class",
        claims=[uclaim("claim-0", req("req-0", "unknown-class"))],
        slices=ONE_DEVICE,
        expect=Error("could not retrieve device class unknown-class"),
    ),
    Ported(
        "an_empty_class_name_is_an_error",
        "empty-class",
        claims=[uclaim("claim-0", req("req-0", ""))],
        slices=ONE_DEVICE,
        expect=Error("claim claim-0, request req-0: missing device class name (unsupported request type?)"),
    ),
    Ported(
        "an_unknown_selector_type_is_an_error",
        "unknown-selector",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 1, {}))],
        slices=ONE_DEVICE,
        expect=Error("CEL expression empty (unsupported selector type?)"),
    ),
    Ported(
        "an_unknown_allocation_mode_is_an_error",
        "unknown-allocation-mode",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 1, mode="future-mode"))],
        slices=ONE_DEVICE,
        expect=Error("unsupported count mode future-mode"),
    ),
    Ported(
        "an_unknown_constraint_type_is_an_error",
        "unknown-constraint",
        claims=[uclaim("claim-0", req("req-0", CLASS_A), constraints=[{}])],
        slices=ONE_DEVICE,
        expect=Error("empty constraint (unsupported constraint type?)"),
    ),
    Ported(
        "a_claim_selector_that_does_not_compile_is_an_error",
        "invalid-CEL-one-device",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 1, "noSuchVar"))],
        slices=ONE_DEVICE,
        expect=Error("undeclared reference"),
    ),
    Ported(
        "a_class_selector_that_does_not_compile_is_an_error",
        "invalid-CEL-one-device-class",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A, expression="noSuchVar")],
        slices=ONE_DEVICE,
        expect=Error("undeclared reference"),
    ),
    Ported(
        "a_selector_that_does_not_compile_is_an_error_for_all_too",
        "invalid-CEL-all-devices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 1, "noSuchVar", mode="All"))],
        slices=ONE_DEVICE,
        expect=Error("undeclared reference"),
    ),
    Ported(
        "more_than_32_devices_in_one_request_is_an_error",
        "too-many-devices-single-request",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 500))],
        expect=Error("exceeds the claim limit"),
    ),
    Ported(
        "32_devices_without_slices_is_merely_unschedulable",
        "many-devices-okay",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 32))],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "more_than_32_devices_over_two_requests_is_an_error",
        "too-many-devices-total",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 32), req("req-1", CLASS_A, 1))],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(33))],
        expect=Error("exceeds the claim limit"),
    ),
    Ported(
        "the_claim_limit_is_checked_before_selectors",
        "all-devices-invalid-CEL",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 500))],
        expect=Error("exceeds the claim limit"),
    ),
    # ------------------------------------------------------------------ matchAttribute constraints
    Ported(
        "devices_matching_on_every_attribute_type_satisfy_the_constraints",
        "with-constraint",
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A),
                req("req-1", CLASS_A),
                constraints=[match(NUMA), match(VERSION), match(STRING), match(BOOL)],
            )
        ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", attrs=ALL_FOUR_MATCH),
                dev("device-2", attrs=ALL_FOUR_MATCH),
            )
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1", DRIVER_A, "pool-1", "device-2"),
            )
        ],
    ),
    Ported(
        "a_device_without_the_matched_attribute_is_not_taken",
        "with-constraint-non-existent-attribute",
        claims=[uclaim("claim-0", req("req-0", CLASS_A), constraints=[match(MISSING)])],
        slices=ONE_DEVICE,
        expect=UNSCHEDULABLE,
    ),
    _two("different_int_values_do_not_match", "int", {"name": NUMA, "a": {"numa": i(1)}}, {"numa": i(2)}),
    _two(
        "different_string_values_do_not_match",
        "string",
        {"name": STRING, "a": {"stringAttribute": s("stringAttributeValue")}},
        {"stringAttribute": s("stringAttributeValue2")},
    ),
    _two(
        "different_bool_values_do_not_match",
        "bool",
        {"name": BOOL, "a": {"boolAttribute": b(True)}},
        {"boolAttribute": b(False)},
    ),
    _two(
        "different_versions_do_not_match",
        "version",
        {"name": VERSION, "a": {"driverVersion": v("1.0.0")}},
        {"driverVersion": v("2.0.0")},
    ),
    Ported(
        "a_constraint_all_devices_cannot_meet_is_an_error",
        "with-constraint-not-matching-int-attribute-all-devices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 0, mode="All"), constraints=[match(NUMA)])],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", attrs={"numa": i(1)}),
                dev("device-2", attrs={"numa": i(2)}),
            )
        ],
        expect=Error(
            "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint"
            " would not be satisfied"
        ),
    ),
    Ported(
        "a_constraint_for_one_request_does_not_bind_the_other",
        "with-constraint-for-request",
        claims=[
            uclaim(
                "claim-0", req("req-0", CLASS_A), req("req-1", CLASS_A), constraints=[match(VERSION, "req-0")]
            )
        ],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", attrs={"driverVersion": v("1.0.0")}),
                dev("device-2", attrs={"driverVersion": v("2.0.0")}),
            )
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1", DRIVER_A, "pool-1", "device-2"),
            )
        ],
    ),
    Ported(
        "a_second_constraint_makes_the_first_choice_retry",
        "with-constraint-for-request-retry",
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A),
                req("req-1", CLASS_A),
                constraints=[match(VERSION, "req-0"), match(STRING)],
            )
        ],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", attrs={"driverVersion": v("1.0.0"), "stringAttribute": s("a")}),
                dev("device-2", attrs={"driverVersion": v("2.0.0"), "stringAttribute": s("b")}),
                dev("device-3", attrs={"driverVersion": v("3.0.0"), "stringAttribute": s("b")}),
            )
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
                res("req-1", DRIVER_A, "pool-1", "device-3"),
            )
        ],
    ),
    # ------------------------------------------------------------------ configuration
    Ported(
        "a_class_config_is_copied_for_all_requests",
        "with-class-device-config",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A, config="classAttribute")],
        slices=ONE_DEVICE,
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                config=[from_class(DRIVER_A, "classAttribute")],
            )
        ],
    ),
    Ported(
        "each_class_config_is_copied_once_naming_its_requests",
        "with-class-device-config-with-multiple-request-and-configs",
        claims=[uclaim("claim-0", req("req-0", CLASS_A), req("req-1", CLASS_A), req("req-2", CLASS_B))],
        classes=[
            device_class(CLASS_A, DRIVER_A, config="classAttribute-A"),
            device_class(CLASS_B, DRIVER_B, config="classAttribute-B"),
        ],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2)),
            one_device("slice-2", NODE_1, "pool-1", DRIVER_B),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-0"),
                res("req-1", DRIVER_A, "pool-1", "device-1"),
                res("req-2", DRIVER_B, "pool-1", "device-1"),
                config=[
                    from_class(DRIVER_A, "classAttribute-A", "req-0", "req-1"),
                    from_class(DRIVER_B, "classAttribute-B", "req-2"),
                ],
                ordered=True,
            )
        ],
    ),
    Ported(
        "a_claim_config_for_two_of_three_requests_keeps_its_list",
        "with-claim-config-for-two-requests",
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A),
                req("req-1", CLASS_A),
                req("req-2", CLASS_A),
                config=[claim_config(["req-0", "req-1"], DRIVER_A, "deviceAttribute")],
            )
        ],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(3))],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-0"),
                res("req-1", DRIVER_A, "pool-1", "device-1"),
                res("req-2", DRIVER_A, "pool-1", "device-2"),
                config=[from_claim(DRIVER_A, "deviceAttribute", "req-0", "req-1")],
                ordered=True,
            )
        ],
    ),
    Ported(
        "a_claim_config_is_copied",
        "claim-with-device-config",
        claims=[
            uclaim("claim-0", req("req-0", CLASS_A), config=[claim_config([], DRIVER_A, "deviceAttribute")])
        ],
        slices=ONE_DEVICE,
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                config=[from_claim(DRIVER_A, "deviceAttribute")],
            )
        ],
    ),
    # ------------------------------------------------------------------ the search order
    Ported(
        "pools_are_tried_in_name_order",
        "lexicographical-sorting-pools",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            one_device("slice-1", NODE_1, "pool-3", DRIVER_A),
            one_device("slice-2", NODE_1, "pool-2", DRIVER_A),
            one_device("slice-3", NODE_1, "pool-1", DRIVER_A),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-0", DRIVER_A, "pool-2", "device-1"),
            )
        ],
    ),
    Ported(
        "pools_with_binding_conditions_come_last",
        "lexicographical-sorting-pools-with-binding-conditions",
        features=features("DeviceBindingAndStatus"),
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", binding=(["IsPrepare"], ["BindingFailed"])),
            ),
            rslice("slice-3", NODE_1, "pool-3", DRIVER_A, dev("device-3")),
            rslice("slice-2", NODE_1, "pool-2", DRIVER_A, dev("device-2")),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-2", "device-2"),
                res("req-0", DRIVER_A, "pool-3", "device-3"),
            )
        ],
    ),
    Ported(
        "slices_of_a_pool_are_tried_in_name_order",
        "lexicographical-sorting-slices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            rslice("slice-3", NODE_1, "pool-1", DRIVER_A, dev("device-3"), count=3),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, dev("device-2"), count=3),
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=3),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
            )
        ],
    ),
    Ported(
        "within_a_pool_a_device_with_binding_conditions_keeps_its_place",
        "lexicographical-sorting-slices-with-binding-conditions",
        features=features("DeviceBindingAndStatus"),
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", binding=(["IsPrepare"], ["BindingFailed"])),
                count=3,
            ),
            rslice("slice-3", NODE_1, "pool-1", DRIVER_A, dev("device-3"), count=3),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, dev("device-2"), count=3),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1", binding=(["IsPrepare"], ["BindingFailed"])),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
                ordered=True,
            )
        ],
    ),
    Ported(
        "tries_combinations_not_permutations_in_one_slice",
        "check-combinations-within-single-request-single-pool-single-slice",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 5))],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(4, 1))],
        expect=UNSCHEDULABLE,
        steps=16,
    ),
    Ported(
        "tries_combinations_not_permutations_over_slices",
        "check-combinations-within-single-request-single-pool-multiple-slices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 5))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1), count=2),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, *devs(2, 3), count=2),
        ],
        expect=UNSCHEDULABLE,
        steps=16,
    ),
    Ported(
        "tries_combinations_not_permutations_over_pools_and_slices",
        "check-combinations-within-single-request-multiple-pools-multiple-slices",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 5))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, dev("device-2"), count=2),
            rslice("slice-3", NODE_1, "pool-2", DRIVER_A, *devs(2, 3)),
        ],
        expect=UNSCHEDULABLE,
        steps=16,
    ),
    Ported(
        "tries_combinations_not_permutations_over_many_pools",
        "check-combinations-within-single-request-many-pools",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 5))],
        slices=[one_device(f"slice-{n}", NODE_1, f"pool-{n}", DRIVER_A) for n in range(1, 5)],
        expect=UNSCHEDULABLE,
        steps=16,
    ),
    Ported(
        "backtracks_to_free_the_one_device_a_later_request_needs",
        "check-combinations-with-backtracking",
        claims=[
            uclaim(
                "claim-0",
                req("req-1", CLASS_A, 2),
                req("req-2", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].type == "X"'),
            )
        ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", attrs={"type": s("X")}),
                dev("device-2", attrs={"type": s("Y")}),
                dev("device-3", attrs={"type": s("Y")}),
            )
        ],
        expect=[
            alloc(
                local(),
                res("req-1", DRIVER_A, "pool-1", "device-2"),
                res("req-1", DRIVER_A, "pool-1", "device-3"),
                res("req-2", DRIVER_A, "pool-1", "device-1"),
            )
        ],
        steps=12,
    ),
    Ported(
        "backtracks_across_slices_and_pools",
        "check-combinations-with-backtracking-across-slices-and-pools",
        features=features("DeviceBindingAndStatus"),
        claims=[
            uclaim(
                "claim-0",
                req("req-1", CLASS_A, 2),
                req("req-2", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].type == "X"'),
            )
        ],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", attrs={"type": s("X")}), count=2),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, dev("device-2", attrs={"type": s("Y")}), count=2),
            rslice(
                "slice-3",
                NODE_1,
                "pool-2",
                DRIVER_A,
                dev("device-3", attrs={"type": s("Y")}, binding=(["IsPrepare"], [])),
            ),
        ],
        expect=[
            alloc(
                local(),
                res("req-1", DRIVER_A, "pool-1", "device-2"),
                res("req-1", DRIVER_A, "pool-2", "device-3", binding=(["IsPrepare"], [])),
                res("req-2", DRIVER_A, "pool-1", "device-1"),
            )
        ],
        steps=12,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_it_gives_upstreams_answer(case: Ported) -> None:
    check(case)
