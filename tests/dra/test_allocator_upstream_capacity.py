"""Upstream's allocator table, ported: consumable capacity (DRAConsumableCapacity) — devices allocated
several times, request policies, capacity in use, ``All`` with capacity, counters of shared partitions —
and the ``distinctAttribute`` constraint that comes with it."""

from __future__ import annotations

import pytest

from tests.dra.upstream_cases import (
    BOOL,
    CAP0,
    CAP1,
    CLASS_A,
    COUNTER_SET_1,
    COUNTER_SET_2,
    DRIVER_A,
    NODE_1,
    NUMA,
    STRING,
    UNSCHEDULABLE,
    VERSION,
    Error,
    J,
    Ported,
    all_req,
    alloc,
    b,
    case_ids,
    check,
    dev,
    distinct,
    features,
    first_of,
    i,
    local,
    match,
    memory_at_least,
    multi_class,
    one_device,
    req,
    res,
    rslice,
    s,
    sub,
    uclaim,
    v,
)

CC = features("ConsumableCapacity")
MULTI_A = multi_class(CLASS_A, DRIVER_A, True)
DEDICATED_A = multi_class(CLASS_A, DRIVER_A, False)
TWO_PLAIN_CLAIMS = [uclaim("claim-0", req("req-0", CLASS_A)), uclaim("claim-1", req("req-0", CLASS_A))]


def shared(name: str, **kw: object) -> J:
    """A device that may be allocated several times."""
    return dev(name, multi=True, **kw)  # type: ignore[arg-type]


def on_node(*devices: J) -> list[J]:
    return [rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devices)]


def asks(amount: str, name: str = "claim-0") -> J:
    return uclaim(name, req("req-0", CLASS_A, capacity=amount))


def got(device: str, request: str = "req-0", **consumed: str) -> J:
    return res(
        request,
        DRIVER_A,
        "pool-1",
        device,
        share=True,
        consumed={k.replace("_", "-"): q for k, q in consumed.items()},
    )


def cap0_at_least(amount: str) -> str:
    return f'device.capacity["{DRIVER_A}"]["{CAP0}"].compareTo(quantity("{amount}")) >= 0'


def cap0(amount: str) -> dict[str, str]:
    return {CAP0: amount}


IN_USE_2 = {(DRIVER_A, "pool-1", "device-1"): cap0("2")}
IN_USE_1 = {(DRIVER_A, "pool-1", "device-1"): cap0("1")}

CASES: list[Ported] = [
    # ------------------------------------------------------------------ the feature gate
    Ported(
        "a_capacity_request_needs_its_feature",
        "consumable-capacity-disabled-feature",
        features=features("DeviceBindingAndStatus"),
        claims=[asks("1")],
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=Error(
            "claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
        ),
    ),
    Ported(
        "a_capacity_request_in_a_subrequest_needs_its_feature",
        "consumable-capacity-disabled-feature-with-prioritized-list",
        features=features("PrioritizedList", "DeviceBindingAndStatus"),
        claims=[
            uclaim(
                "claim-0",
                first_of(
                    "req-0", sub("subReq-0", CLASS_A, capacity="1"), sub("subReq-1", CLASS_A, capacity="1")
                ),
            )
        ],
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=Error(
            "claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
        ),
    ),
    # ------------------------------------------------------------------ what one allocation consumes
    Ported(
        "a_request_for_a_capacity_the_device_lacks_does_not_fit",
        "consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
        features=CC,
        claims=[asks("1")],
        slices=on_node(shared("device-1", capacity={CAP1: "1"})),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "all_skips_a_device_lacking_the_requested_capacity",
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request",
        features=CC,
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A, capacity="1"))],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", capacity={CAP1: "1"})),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_device_without_capacity_is_shared_by_two_claims",
        "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
        features=CC,
        claims=TWO_PLAIN_CLAIMS,
        classes=[MULTI_A],
        slices=on_node(shared("device-1")),
        expect=[alloc(local(), got("device-1")), alloc(local(), got("device-1"))],
    ),
    Ported(
        "without_a_request_or_policy_an_allocation_takes_the_whole_capacity",
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
        features=CC,
        claims=TWO_PLAIN_CLAIMS,
        classes=[MULTI_A],
        slices=on_node(shared("device-1", capacity=cap0("1")), shared("device-2", capacity=cap0("1"))),
        expect=[
            alloc(local(), got("device-1", capacity_0="1")),
            alloc(local(), got("device-2", capacity_0="1")),
        ],
    ),
    Ported(
        "a_second_whole_capacity_allocation_does_not_fit",
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
        features=CC,
        claims=TWO_PLAIN_CLAIMS,
        classes=[MULTI_A],
        slices=on_node(shared("device-1", capacity=cap0("2"))),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "two_requests_of_half_the_capacity_share_the_device",
        "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
        features=CC,
        claims=[asks("1"), asks("1", "claim-1")],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", capacity=cap0("2"))),
        expect=[
            alloc(local(), got("device-1", capacity_0="1")),
            alloc(local(), got("device-1", capacity_0="1")),
        ],
    ),
    Ported(
        "without_a_request_the_policy_default_is_consumed",
        "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
        features=CC,
        claims=TWO_PLAIN_CLAIMS,
        classes=[MULTI_A],
        slices=on_node(shared("device-1", range_policy=cap0("4"))),
        expect=[
            alloc(local(), got("device-1", capacity_0="2")),
            alloc(local(), got("device-1", capacity_0="2")),
        ],
    ),
    Ported(
        "a_zero_default_lets_any_number_share",
        "consumable-capacity-multi-allocatable-device-with-zero-request-policy",
        features=CC,
        claims=TWO_PLAIN_CLAIMS,
        classes=[MULTI_A],
        slices=on_node(shared("device-1", valid_values=("0", cap0("1"), ()))),
        expect=[
            alloc(local(), got("device-1", capacity_0="0")),
            alloc(local(), got("device-1", capacity_0="0")),
        ],
    ),
    Ported(
        "a_request_outside_the_valid_values_does_not_fit",
        "consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
        features=CC,
        claims=[asks("1")],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", valid_values=("0", cap0("1"), ()))),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_request_below_the_range_is_raised_to_its_minimum",
        "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
        features=CC,
        claims=[asks("1"), asks("1", "claim-1")],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", range_policy=cap0("4"))),
        expect=[
            alloc(local(), got("device-1", capacity_0="2")),
            alloc(local(), got("device-1", capacity_0="2")),
        ],
    ),
    Ported(
        "a_request_is_rounded_up_to_the_range_step",
        "consumable-capacity-multi-allocatable-device-with-range-policy-step",
        features=CC,
        claims=[asks("3")],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", range_policy=cap0("4"))),
        expect=[alloc(local(), got("device-1", capacity_0="4"))],
    ),
    Ported(
        "a_request_equal_to_a_valid_value_is_consumed_as_asked",
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy",
        features=CC,
        claims=[asks("2")],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", valid_values=("1", cap0("4"), ("2",)))),
        expect=[alloc(local(), got("device-1", capacity_0="2"))],
    ),
    Ported(
        "a_request_is_rounded_up_to_the_next_valid_value",
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
        features=CC,
        claims=[asks("2")],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", valid_values=("1", cap0("3"), ("3",)))),
        expect=[alloc(local(), got("device-1", capacity_0="3"))],
    ),
    Ported(
        "two_requests_over_the_capacity_do_not_share",
        "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
        features=CC,
        claims=[asks("1"), asks("2", "claim-1")],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", range_policy=cap0("2"))),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_request_over_the_range_maximum_does_not_fit",
        "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
        features=CC,
        claims=[asks("6")],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", range_policy=cap0("10"))),
        expect=UNSCHEDULABLE,
    ),
    # ------------------------------------------------------------------ capacity already in use
    Ported(
        "the_remaining_capacity_serves",
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
        features=CC,
        claims=[asks("2")],
        shared=IN_USE_2,
        classes=[MULTI_A],
        slices=on_node(shared("device-1", range_policy=cap0("4"))),
        expect=[alloc(local(), got("device-1", capacity_0="2"))],
    ),
    Ported(
        "a_device_whose_capacity_is_used_up_gives_way_to_the_next",
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
        features=CC,
        claims=[asks("2")],
        shared=IN_USE_2,
        classes=[MULTI_A],
        slices=on_node(
            shared("device-1", range_policy=cap0("2")), shared("device-2", range_policy=cap0("2"))
        ),
        expect=[alloc(local(), got("device-2", capacity_0="2"))],
    ),
    Ported(
        "backtracks_when_the_shared_device_a_constraint_needs_is_full",
        "consumable-capacity-with-multi-allocatable-device-backtrack",
        features=CC,
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A, capacity="2"),
                req("req-1", CLASS_A, capacity="2"),
                constraints=[match(STRING)],
            ),
            asks("2", "claim-1"),
        ],
        slices=on_node(
            shared("device-2", attrs={"stringAttribute": s("stringAttributeValue1")}, range_policy=cap0("2")),
            shared("device-1", attrs={"stringAttribute": s("stringAttributeValue2")}, range_policy=cap0("4")),
        ),
        expect=[
            alloc(local(), got("device-1", capacity_0="2"), got("device-1", "req-1", capacity_0="2")),
            alloc(local(), got("device-2", capacity_0="2")),
        ],
    ),
    Ported(
        "a_subrequest_asking_less_fits_where_the_first_did_not",
        "consumable-capacity-multi-allocatable-device-with-subrequest",
        features=features("ConsumableCapacity", "PrioritizedList"),
        claims=[
            uclaim(
                "claim-0",
                first_of(
                    "req-0",
                    sub("subReq-0", CLASS_A, capacity="4"),
                    sub("subReq-1", CLASS_A, capacity="2"),
                    sub("subReq-1", CLASS_A),
                ),
            )
        ],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", range_policy=cap0("2"))),
        expect=[alloc(local(), got("device-1", "req-0/subReq-1", capacity_0="2"))],
    ),
    Ported(
        "no_capacity_left_is_unschedulable",
        "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
        features=CC,
        claims=[asks("2")],
        shared=IN_USE_2,
        classes=[MULTI_A],
        slices=on_node(shared("device-1", range_policy=cap0("2"))),
        expect=UNSCHEDULABLE,
    ),
    # ------------------------------------------------------------------ All with capacity
    Ported(
        "all_leaves_out_a_device_without_the_capacity",
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
        features=CC,
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A, capacity="2"))],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", capacity=cap0("2")), shared("device-2")),
        expect=[alloc(local(), got("device-1", capacity_0="2"))],
    ),
    Ported(
        "all_leaves_out_a_device_with_too_little_capacity",
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity",
        features=CC,
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A, capacity="2"))],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", capacity=cap0("2")), shared("device-2", capacity=cap0("1"))),
        expect=[alloc(local(), got("device-1", capacity_0="2"))],
    ),
    Ported(
        "all_shares_a_device_an_earlier_request_of_the_claim_got",
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
        features=CC,
        claims=[
            uclaim("claim-0", req("req-0", CLASS_A, capacity="1"), all_req("req-1", CLASS_A, capacity="1"))
        ],
        slices=on_node(shared("device-1", capacity=cap0("2")), shared("device-2", capacity=cap0("1"))),
        expect=[
            alloc(
                local(),
                got("device-1", capacity_0="1"),
                got("device-1", "req-1", capacity_0="1"),
                got("device-2", "req-1", capacity_0="1"),
            )
        ],
    ),
    Ported(
        "all_shares_a_device_in_use_with_room_left",
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient",
        features=CC,
        shared=IN_USE_1,
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A, capacity="1"))],
        slices=on_node(shared("device-1", capacity=cap0("2")), shared("device-2", capacity=cap0("1"))),
        expect=[alloc(local(), got("device-1", capacity_0="1"), got("device-2", capacity_0="1"))],
    ),
    Ported(
        "all_fails_when_an_earlier_request_used_up_a_device",
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
        features=CC,
        claims=[
            uclaim("claim-0", req("req-0", CLASS_A, capacity="1"), all_req("req-1", CLASS_A, capacity="1"))
        ],
        slices=on_node(shared("device-1", capacity=cap0("1")), shared("device-2", capacity=cap0("1"))),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "all_leaves_out_a_device_used_up_by_other_claims",
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient",
        features=CC,
        shared=IN_USE_1,
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A, capacity="1"))],
        slices=on_node(shared("device-1", capacity=cap0("1")), shared("device-2", capacity=cap0("1"))),
        expect=[alloc(local(), got("device-2", capacity_0="1"))],
    ),
    # ------------------------------------------------------------------ dedicated and multi-allocatable devices
    Ported(
        "a_dedicated_device_is_allocated_whole_for_a_capacity_request",
        "consumable-capacity-dedicated-device-with-consumable-capacity-request",
        features=CC,
        claims=[asks("1")],
        classes=[DEDICATED_A],
        slices=on_node(dev("device-1", capacity=cap0("1"))),
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "a_dedicated_device_is_not_shared_by_two_capacity_requests",
        "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
        features=CC,
        claims=[asks("1"), asks("1", "claim-1")],
        classes=[DEDICATED_A],
        slices=on_node(dev("device-1", range_policy=cap0("2"))),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_class_for_dedicated_devices_does_not_select_a_shared_one",
        "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
        features=CC,
        claims=[asks("1")],
        classes=[DEDICATED_A],
        slices=on_node(shared("device-1", capacity=cap0("1"))),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_shared_device_held_whole_by_another_claim_is_not_shared",
        "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
        features=CC,
        allocated=[(DRIVER_A, "pool-1", "device-1")],
        claims=[asks("1")],
        classes=[MULTI_A],
        slices=on_node(shared("device-1", range_policy=cap0("2"))),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_device_no_longer_shareable_with_shares_in_use_is_not_taken",
        "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
        features=CC,
        shared=IN_USE_1,
        claims=[asks("1")],
        classes=[MULTI_A],
        slices=on_node(dev("device-1", range_policy=cap0("2"))),
        expect=UNSCHEDULABLE,
    ),
    # ------------------------------------------------------------------ shared partitions
    Ported(
        "a_shared_partition_draws_on_the_counters_once",
        "allow-multiple-allocations-with-partitionable-device",
        features=features("PrioritizedList", "PartitionableDevices", "ConsumableCapacity"),
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A),
                first_of(
                    "req-1",
                    sub("subReq-0", CLASS_A, 1, memory_at_least("6Gi")),
                    sub("subReq-1", CLASS_A, 1, memory_at_least("4Gi")),
                ),
            )
        ],
        classes=[MULTI_A],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                *(
                    shared(name, counters=[(COUNTER_SET_1, {"memory": memory})], capacity_from_counters=True)
                    for name, memory in (("device-1", "4Gi"), ("device-2", "6Gi"), ("device-3", "4Gi"))
                ),
                count=2,
            ),
            rslice(
                "slice-2",
                NODE_1,
                "pool-1",
                DRIVER_A,
                count=2,
                counter_sets=[(COUNTER_SET_1, {"memory": "8Gi"})],
            ),
        ],
        expect=[
            alloc(local(), got("device-1", memory="4Gi"), got("device-3", "req-1/subReq-1", memory="4Gi"))
        ],
    ),
    Ported(
        "a_partition_in_shared_use_elsewhere_still_draws_on_the_counters",
        "allow-multiple-allocations-with-shared-device-counter-cross-cycle",
        features=features("PartitionableDevices", "ConsumableCapacity"),
        shared=IN_USE_1,
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].mode == "b"', capacity="1"),
            )
        ],
        classes=[MULTI_A],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                *(
                    shared(
                        name,
                        attrs={"mode": s(mode)},
                        counters=[(COUNTER_SET_1, cap0("1"))],
                        capacity_from_counters=True,
                    )
                    for name, mode in (("device-1", "a"), ("device-2", "b"))
                ),
                count=2,
            ),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, count=2, counter_sets=[(COUNTER_SET_1, cap0("1"))]),
        ],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "shared_partitions_within_counter_sets_and_capacity_policies",
        "consumable-capacity-with-partitionable-device-multiple-capacity-pools",
        features=features("PrioritizedList", "PartitionableDevices", "ConsumableCapacity"),
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A, capacity="1"),
                req("req-2", CLASS_A, capacity="2"),
                first_of(
                    "req-1",
                    sub("subReq-0", CLASS_A, 1, cap0_at_least("4"), capacity="1"),
                    sub("subReq-1", CLASS_A, 1, cap0_at_least("2"), capacity="1"),
                ),
            )
        ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                *(
                    shared(
                        name,
                        counters=[(COUNTER_SET_1, cap0(amount)), (COUNTER_SET_2, {CAP1: "4"})],
                        capacity_from_counters=True,
                        range_policy={CAP1: "4"},
                    )
                    for name, amount in (("device-1", "2"), ("device-2", "4"), ("device-3", "2"))
                ),
                count=2,
            ),
            rslice(
                "slice-2",
                NODE_1,
                "pool-1",
                DRIVER_A,
                count=2,
                counter_sets=[(COUNTER_SET_1, cap0("4")), (COUNTER_SET_2, {CAP1: "8"})],
            ),
        ],
        expect=[
            alloc(
                local(),
                got("device-1", capacity_0="1", capacity_1="2"),
                got("device-3", "req-2", capacity_0="2", capacity_1="2"),
                got("device-1", "req-1/subReq-1", capacity_0="1", capacity_1="2"),
            )
        ],
    ),
    # ------------------------------------------------------------------ distinctAttribute
    Ported(
        "distinct_constraints_over_overlapping_request_sets",
        "with-distinct-constraints",
        features=CC,
        claims=[
            uclaim(
                "claim-0",
                *(req(f"req-{n}", CLASS_A) for n in range(4)),
                constraints=[
                    distinct(BOOL, "req-0", "req-1"),
                    distinct(VERSION, "req-0", "req-1", "req-2"),
                    distinct(NUMA, "req-0", "req-1", "req-2", "req-3"),
                ],
            )
        ],
        slices=on_node(
            shared("device-1", attrs={"driverVersion": v("1.0.0"), "numa": i(0), "boolAttribute": b(True)}),
            shared("device-2", attrs={"driverVersion": v("1.0.1"), "numa": i(1), "boolAttribute": b(False)}),
            shared("device-3", attrs={"driverVersion": v("1.0.2"), "numa": i(2), "boolAttribute": b(True)}),
            shared("device-4", attrs={"driverVersion": v("1.0.0"), "numa": i(3), "boolAttribute": b(True)}),
        ),
        expect=[alloc(local(), *(got(f"device-{n + 1}", f"req-{n}") for n in range(4)))],
    ),
    Ported(
        "a_device_without_the_distinct_attribute_is_not_taken",
        "with-distinct-constraints-attribute-not-set",
        features=CC,
        claims=[uclaim("claim-0", req("req-0", CLASS_A), constraints=[distinct(BOOL, "req-0")])],
        slices=on_node(shared("device-1")),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "an_attribute_without_a_value_type_is_an_error_naming_it",
        "with-distinct-constraints-unknown-type-attribute",
        features=CC,
        claims=[uclaim("claim-0", req("req-0", CLASS_A), constraints=[distinct(BOOL, "req-0")])],
        slices=on_node(shared("device-1", attrs={"boolAttribute": {}})),
        expect=Error("attribute boolAttribute: unsupported attribute value"),
    ),
    Ported(
        "a_distinct_constraint_binds_only_the_requests_it_names",
        "with-distinct-constraints-with-subrequests",
        features=features("ConsumableCapacity", "PrioritizedList"),
        claims=[
            uclaim(
                "claim-0",
                *(
                    first_of(
                        f"req-{n}",
                        sub("subReq-0", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].boolAttribute'),
                        sub("subReq-1", CLASS_A),
                    )
                    for n in range(3)
                ),
                constraints=[distinct(BOOL, "req-0", "req-1")],
            )
        ],
        slices=on_node(
            shared("device-1", attrs={"boolAttribute": b(True)}),
            shared("device-2", attrs={"boolAttribute": b(False)}),
        ),
        expect=[
            alloc(
                local(),
                got("device-1", "req-0/subReq-0"),
                got("device-2", "req-1/subReq-1"),
                got("device-1", "req-2/subReq-0"),
            )
        ],
    ),
    Ported(
        "one_shared_device_cannot_be_distinct_from_itself",
        "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
        features=CC,
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A, capacity="1"),
                req("req-1", CLASS_A, capacity="1"),
                constraints=[distinct(STRING)],
            )
        ],
        classes=[MULTI_A],
        slices=on_node(
            shared("device-1", attrs={"stringAttribute": s("stringAttributeValue")}, range_policy=cap0("2"))
        ),
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "two_shared_devices_with_distinct_values_serve_two_requests",
        "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
        features=CC,
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A, capacity="2"),
                req("req-1", CLASS_A, capacity="2"),
                constraints=[distinct(STRING)],
            )
        ],
        classes=[MULTI_A],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                shared(
                    "device-1", attrs={"stringAttribute": s("stringAttributeValue1")}, range_policy=cap0("4")
                ),
                count=2,
            ),
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                shared(
                    "device-2", attrs={"stringAttribute": s("stringAttributeValue2")}, range_policy=cap0("4")
                ),
                count=2,
            ),
        ],
        expect=[alloc(local(), got("device-1", capacity_0="2"), got("device-2", "req-1", capacity_0="2"))],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_it_gives_upstreams_answer(case: Ported) -> None:
    check(case)
