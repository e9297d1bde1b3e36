"""Upstream's allocator table, ported: pools — generations, completeness, validity (the node-local
"invalid resource pools were encountered"), pools over several nodes, and partitionable devices
(counter sets shared by the devices of a pool, wherever those devices are published)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from tests.dra.upstream_cases import (
    CLASS_A,
    CLASS_A_OBJ,
    CLASS_B,
    CLASS_B_OBJ,
    COUNTER_SET_1,
    COUNTER_SET_2,
    DRIVER_A,
    DRIVER_B,
    NODE_1,
    NODE_2,
    NODE_2_OBJ,
    PER_DEVICE,
    UNSCHEDULABLE,
    Error,
    J,
    Ported,
    alloc,
    case_ids,
    check,
    dev,
    features,
    first_of,
    labels,
    local,
    memory_at_least,
    one_device,
    req,
    res,
    rslice,
    sub,
    uclaim,
)

PART = features("PartitionableDevices")
PART_PRIO = features("PartitionableDevices", "PrioritizedList")
INVALID = Error("invalid resource pools were encountered", node_local=True)


def part(name: str, *consumption: tuple[str, Mapping[str, str] | None], **kw: object) -> J:
    """A partition: it consumes counters and has a capacity per counter (upstream ``fromCounters``)."""
    return dev(name, counters=list(consumption), capacity_from_counters=True, **kw)  # type: ignore[arg-type]


def counters(
    name: str, where: str | J, pool: str, *sets: tuple[str, Mapping[str, str] | None], count: int = 2
) -> J:
    return rslice(name, where, pool, DRIVER_A, count=count, counter_sets=list(sets))


def mem(amount: str) -> tuple[str, dict[str, str]]:
    return (COUNTER_SET_1, {"memory": amount})


SIX_OR_FOUR = first_of(
    "req-1",
    sub("subReq-0", CLASS_A, 1, memory_at_least("6Gi")),
    sub("subReq-1", CLASS_A, 1, memory_at_least("4Gi")),
)
FOUR_SIX_FOUR = rslice(
    "slice-1",
    NODE_1,
    "pool-1",
    DRIVER_A,
    part("device-1", mem("4Gi")),
    part("device-2", mem("6Gi")),
    part("device-3", mem("4Gi")),
    count=2,
)


def _stale(where_1: str, where_2: str, second_generation_slices: int) -> list[J]:
    """Generation 1 of pool-1 published for ``where_1`` (two slices), generation 2 for ``where_2``."""
    out = [rslice("slice-1", where_1, "pool-1", DRIVER_A, dev(d), count=2) for d in ("device-1", "device-2")]
    out += [
        rslice("slice-2", where_2, "pool-1", DRIVER_A, dev(d), count=2, generation=2)
        for d in ("device-1", "device-2")[:second_generation_slices]
    ]
    return out


CASES: list[Ported] = [
    # ------------------------------------------------------------------ generations and completeness
    Ported(
        "a_newer_generation_makes_the_pool_incomplete_until_it_is_all_there",
        "obsolete-slice",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1-obsolete", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
            rslice("slice-1-obsolete", NODE_1, "pool-1", DRIVER_A, dev("device-2"), count=2, generation=2),
        ],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_slice_published_twice_makes_the_pool_invalid",
        "duplicate-slice",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_A, count=2),
            one_device("slice-1-2", NODE_1, "pool-1", DRIVER_A, count=2),
        ],
        expect=INVALID,
    ),
    Ported(
        "an_incomplete_pool_is_not_allocated_from",
        "no-allocation-from-incomplete-pools",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2)],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "an_invalid_pool_does_not_matter_when_another_pool_serves",
        "invalid-pool-is-ok-if-devices-can-be-allocated-from-other",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
            rslice("slice-3", NODE_1, "pool-2", DRIVER_A, dev("device-2")),
        ],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-2", "device-2"))],
    ),
    Ported(
        "an_invalid_pool_is_the_reason_when_nothing_else_serves",
        "invalid-pool-is-error-if-no-other-device-can-be-allocated",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        allocated=[(DRIVER_A, "pool-2", "device-2")],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
            rslice("slice-3", NODE_1, "pool-2", DRIVER_A, dev("device-2")),
        ],
        expect=INVALID,
    ),
    # ------------------------------------------------------------------ pools over several nodes
    Ported(
        "slices_of_one_pool_may_serve_different_nodes",
        "different-resourceslices-in-pool-can-target-different-nodes",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_2, "pool-1", DRIVER_A, dev("device-1"), count=2),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, dev("device-2"), count=2),
        ],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-2"))],
    ),
    Ported(
        "a_newer_generation_for_another_node_makes_this_nodes_slice_obsolete",
        "multi-host-resource-pool-with-stale-slice-for-current-node",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
            rslice("slice-2", NODE_2, "pool-1", DRIVER_A, dev("device-2"), count=2, generation=2),
        ],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_complete_old_generation_here_still_serves_while_a_new_one_moves_away",
        "multi-host-resource-pool-complete-update-from-node-1-to-node-2",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=_stale(NODE_1, NODE_2, 2),
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "a_complete_new_generation_moving_here_serves",
        "multi-host-resource-pool-complete-update-from-node-2-to-node-1",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=_stale(NODE_2, NODE_1, 2),
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "a_complete_old_generation_here_serves_while_a_new_one_is_half_published_elsewhere",
        "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=_stale(NODE_1, NODE_2, 1),
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "a_half_published_new_generation_here_does_not_serve",
        "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=_stale(NODE_2, NODE_1, 1),
        expect=UNSCHEDULABLE,
    ),
    # ------------------------------------------------------------------ partitionable devices
    Ported(
        "a_partition_within_its_counters_is_allocated",
        "partitionable-devices-single-device",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", counters=[mem("4Gi")]), count=2),
            counters("slice-2", NODE_1, "pool-1", mem("8Gi")),
        ],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "counters_leave_room_for_the_second_choice_of_a_list",
        "partitionable-devices-prioritized-list",
        features=PART_PRIO,
        claims=[uclaim("claim-0", req("req-0", CLASS_A), SIX_OR_FOUR)],
        slices=[FOUR_SIX_FOUR, counters("slice-2", NODE_1, "pool-1", mem("8Gi"))],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1/subReq-1", DRIVER_A, "pool-1", "device-3"),
            )
        ],
    ),
    Ported(
        "a_partition_that_would_overdraw_the_counters_is_skipped",
        "partitionable-devices-multiple-devices",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A), req("req-1", CLASS_A))],
        slices=[FOUR_SIX_FOUR, counters("slice-2", NODE_1, "pool-1", mem("8Gi"))],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1", DRIVER_A, "pool-1", "device-3"),
            )
        ],
    ),
    Ported(
        "every_counter_set_a_partition_draws_on_must_have_room",
        "partitionable-devices-multiple-capacity-pools",
        features=PART_PRIO,
        claims=[uclaim("claim-0", req("req-0", CLASS_A), SIX_OR_FOUR)],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                part("device-1", mem("4Gi"), (COUNTER_SET_2, {"cpus": "4"})),
                part("device-2", mem("6Gi"), (COUNTER_SET_2, {"cpus": "6"})),
                part("device-3", mem("4Gi"), (COUNTER_SET_2, {"cpus": "4"})),
                count=2,
            ),
            counters("slice-2", NODE_1, "pool-1", mem("18Gi"), (COUNTER_SET_2, {"cpus": "8"})),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1/subReq-1", DRIVER_A, "pool-1", "device-3"),
            )
        ],
    ),
    Ported(
        "every_counter_of_every_set_must_have_room",
        "partitionable-devices-multiple-counters",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A), req("req-1", CLASS_A))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                part(
                    "device-1",
                    (COUNTER_SET_1, {"memory": "4Gi", "cpus": "6"}),
                    (COUNTER_SET_2, {"cpus": "4", "memory": "2Gi"}),
                ),
                part(
                    "device-2",
                    (COUNTER_SET_1, {"memory": "6Gi", "cpus": "4"}),
                    (COUNTER_SET_2, {"cpus": "6", "memory": "6Gi"}),
                ),
                part(
                    "device-3",
                    (COUNTER_SET_1, {"memory": "4Gi", "cpus": "4"}),
                    (COUNTER_SET_2, {"cpus": "4", "memory": "4Gi"}),
                ),
                count=2,
            ),
            counters(
                "slice-2",
                NODE_1,
                "pool-1",
                (COUNTER_SET_1, {"cpus": "8", "memory": "18Gi"}),
                (COUNTER_SET_2, {"cpus": "12", "memory": "18Gi"}),
            ),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
                res("req-1", DRIVER_A, "pool-1", "device-3"),
            )
        ],
    ),
    Ported(
        "counters_in_use_are_per_pool",
        "partitionable-devices-multiple-pools",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A), req("req-1", CLASS_A))],
        allocated=[
            (DRIVER_A, "pool-1", "device-2"),
            (DRIVER_A, "pool-1", "device-3"),
            (DRIVER_A, "pool-2", "device-1"),
        ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                part("device-1", (COUNTER_SET_1, {"cpus": "6", "memory": "4Gi"})),
                part("device-2", (COUNTER_SET_1, {"cpus": "4", "memory": "6Gi"})),
                part("device-3", (COUNTER_SET_1, {"cpus": "4", "memory": "4Gi"})),
                count=2,
            ),
            counters("slice-2", NODE_1, "pool-1", (COUNTER_SET_1, {"cpus": "8", "memory": "18Gi"})),
            rslice(
                "slice-3",
                NODE_1,
                "pool-2",
                DRIVER_A,
                part("device-1", (COUNTER_SET_1, {"cpus": "6", "memory": "4Gi"})),
                part("device-2", (COUNTER_SET_1, {"cpus": "1", "memory": "7Gi"})),
                part("device-3", (COUNTER_SET_1, {"cpus": "1", "memory": "7Gi"})),
                count=2,
            ),
            counters("slice-4", NODE_1, "pool-2", (COUNTER_SET_1, {"cpus": "8", "memory": "18Gi"})),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-2", "device-2"),
                res("req-1", DRIVER_A, "pool-2", "device-3"),
            )
        ],
    ),
    Ported(
        "a_counter_no_device_consumes_does_not_matter",
        "partitionable-devices-unused-counters-in-counter-set",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", counters=[mem("5Gi")]),
                dev("device-2", counters=[mem("4Gi")]),
                dev("device-3", counters=[mem("4Gi")]),
                count=2,
            ),
            counters("slice-2", NODE_1, "pool-1", (COUNTER_SET_1, {"memory": "8Gi", "unused": "1Gi"})),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
                res("req-0", DRIVER_A, "pool-1", "device-3"),
            )
        ],
    ),
    Ported(
        "counters_taken_by_devices_in_use_leave_too_little",
        "partitionable-devices-no-capacity-available",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        allocated=[(DRIVER_A, "pool-1", "device-2")],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                part("device-1", mem("4Gi")),
                part("device-2", mem("16Gi")),
            ),
            counters("slice-2", NODE_1, "pool-1", mem("18Gi"), count=1),
        ],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "overdrawn_counters_leave_nothing",
        "partitionable-devices-overallocated-capacity-pool",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        allocated=[(DRIVER_A, "pool-1", "device-2")],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                part("device-1", mem("4Gi")),
                part("device-2", mem("20Gi")),
            ),
            counters("slice-2", NODE_1, "pool-1", mem("18Gi"), count=1),
        ],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "without_the_feature_a_partition_is_not_allocated",
        "partitionable-devices-disabled-device-consumes-counters",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", counters=[mem("4Gi")])),
            counters("slice-2", NODE_1, "pool-1", mem("18Gi"), count=1),
        ],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "without_the_feature_a_plain_device_next_to_partitions_is_allocated",
        "partitionable-devices-disabled-other-device-do-not-consume-counters",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", counters=[mem("4Gi")]),
                dev("device-2"),
                count=2,
            ),
            counters("slice-2", NODE_1, "pool-1", mem("18Gi")),
        ],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-2"))],
    ),
    Ported(
        "without_the_feature_per_device_node_selection_is_ignored",
        "partitionable-devices-disabled-per-device-node-selection",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[rslice("slice-1", PER_DEVICE, "pool-1", DRIVER_A, dev("device-2", node_name=NODE_1))],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "per_device_node_names_pick_this_nodes_partition",
        "partitionable-devices-per-device-node-selection-nodename",
        features=PART_PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of(
                    "req-0",
                    sub("subReq-0", CLASS_A, 1, memory_at_least("6Gi")),
                    sub("subReq-1", CLASS_A, 1, memory_at_least("4Gi")),
                ),
            )
        ],
        slices=[
            rslice(
                "slice-1",
                PER_DEVICE,
                "pool-1",
                DRIVER_A,
                part("device-1", mem("4Gi"), node_name=NODE_1),
                part("device-2", mem("6Gi"), node_name=NODE_2),
                count=2,
            ),
            counters("slice-2", PER_DEVICE, "pool-1", mem("18Gi")),
        ],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "a_per_device_node_selector_becomes_the_allocations_selector",
        "partitionable-devices-per-device-node-selection-node-selector",
        features=PART_PRIO,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice(
                "slice-1",
                PER_DEVICE,
                "pool-1",
                DRIVER_A,
                part("device-1", mem("4Gi"), node_selector=labels("region", "region-1")),
                count=2,
            ),
            counters("slice-2", PER_DEVICE, "pool-1", mem("18Gi")),
        ],
        expect=[alloc(labels("region", "region-1"), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "per_device_selection_mixes_selector_name_and_all_nodes",
        "partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
        features=PART_PRIO,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 3), req("req-1", CLASS_B, 3))],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=[
            rslice(
                "slice-1",
                PER_DEVICE,
                "pool-1",
                DRIVER_A,
                part("device-1", mem("4Gi"), node_selector=labels("region", "region-1")),
                part("device-2", mem("4Gi"), node_name=NODE_1),
                part("device-3", mem("4Gi"), all_nodes=True),
                count=2,
            ),
            counters("slice-2", PER_DEVICE, "pool-1", mem("18Gi")),
            rslice(
                "slice-3",
                NODE_1,
                "pool-2",
                DRIVER_B,
                part("device-1", (COUNTER_SET_2, {"memory": "4Gi"})),
                part("device-2", (COUNTER_SET_2, {"memory": "4Gi"})),
                part("device-3", (COUNTER_SET_2, {"memory": "4Gi"})),
                count=2,
            ),
            rslice(
                "slice-4",
                NODE_1,
                "pool-2",
                DRIVER_B,
                count=2,
                counter_sets=[(COUNTER_SET_2, {"memory": "12Gi"})],
            ),
        ],
        expect=[
            alloc(
                local(),
                *(res("req-0", DRIVER_A, "pool-1", f"device-{n}") for n in (1, 2, 3)),
                *(res("req-1", DRIVER_B, "pool-2", f"device-{n}") for n in (1, 2, 3)),
            )
        ],
    ),
    Ported(
        "a_selector_on_attributes_works_with_partitions",
        "partitionable-devices-with-attribute-selector",
        features=PART,
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A, 2),
                req("req-1", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].special'),
            )
        ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                *(
                    dev(
                        f"device-{n}",
                        attrs={"special": {"bool": n == 1}},
                        counters=[(COUNTER_SET_1, {f"cpu{n}": "1"}), (COUNTER_SET_2, {"mem": "10Gi"})],
                    )
                    for n in (1, 2, 3)
                ),
                count=2,
            ),
            counters(
                "slice-2",
                NODE_1,
                "pool-1",
                (COUNTER_SET_1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}),
                (COUNTER_SET_2, {"mem": "30Gi"}),
            ),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
                res("req-0", DRIVER_A, "pool-1", "device-3"),
                res("req-1", DRIVER_A, "pool-1", "device-1"),
            )
        ],
    ),
    # ------------------------------------------------------------------ invalid counter declarations
    Ported(
        "a_counter_set_declared_twice_makes_the_pool_invalid",
        "partitionable-devices-same-counter-set-name-in-different-resource-slices",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=4),
            counters("slice-2", NODE_1, "pool-1", (COUNTER_SET_1, None), count=4),
            rslice("slice-3", NODE_1, "pool-1", DRIVER_A, dev("device-2"), count=4),
            counters("slice-4", NODE_1, "pool-1", (COUNTER_SET_1, None), count=4),
        ],
        expect=INVALID,
    ),
    Ported(
        "consuming_an_undeclared_counter_set_makes_the_pool_invalid",
        "partitionable-devices-device-counter-consumption-references-unknown-counter-set",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", counters=[(COUNTER_SET_2, None)]),
                count=2,
            ),
            counters("slice-2", NODE_1, "pool-1", (COUNTER_SET_1, None)),
        ],
        expect=INVALID,
    ),
    Ported(
        "consuming_an_undeclared_counter_makes_the_pool_invalid",
        "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", counters=[mem("8Gi")]), count=2),
            counters("slice-2", NODE_1, "pool-1", (COUNTER_SET_1, {"other-memory": "8Gi"})),
        ],
        expect=INVALID,
    ),
    Ported(
        "a_counter_set_of_another_pool_does_not_count",
        "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", counters=[mem("8Gi")])),
            counters("slice-2", NODE_1, "pool-2", mem("8Gi"), count=1),
        ],
        expect=INVALID,
    ),
    Ported(
        "a_partition_in_use_on_another_node_draws_on_the_shared_counters",
        "partitionable-devices-devices-on-different-nodes-consume-same-counter-set",
        features=PART_PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of(
                    "req-0",
                    sub("subReq-0", CLASS_A, 1, memory_at_least("6Gi")),
                    sub("subReq-1", CLASS_A, 1, memory_at_least("2Gi")),
                ),
            )
        ],
        allocated=[(DRIVER_A, "pool-1", "device-3")],
        slices=[
            counters("slice-1", NODE_1, "pool-1", mem("8Gi"), count=3),
            rslice(
                "slice-2",
                NODE_1,
                "pool-1",
                DRIVER_A,
                part("device-1", mem("6Gi")),
                part("device-2", mem("2Gi")),
                count=3,
            ),
            rslice("slice-3", NODE_2, "pool-1", DRIVER_A, dev("device-3", counters=[mem("6Gi")]), count=3),
        ],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-2"))],
    ),
    Ported(
        "counters_published_for_another_node_serve_this_nodes_partitions",
        "partitionable-devices-devices-consume-counter-set-in-different-nodes",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        allocated=[(DRIVER_A, "pool-1", "device-1")],
        node=NODE_2_OBJ,
        slices=[
            counters("slice-1", NODE_1, "pool-1", mem("8Gi"), count=3),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, part("device-1", mem("6Gi")), count=3),
            rslice(
                "slice-3",
                NODE_2,
                "pool-1",
                DRIVER_A,
                part("device-2", mem("6Gi")),
                part("device-3", mem("2Gi")),
                count=3,
            ),
        ],
        expect=[alloc(local(NODE_2), res("req-0", DRIVER_A, "pool-1", "device-3"))],
    ),
    Ported(
        "a_bad_counter_reference_in_another_nodes_slice_makes_the_pool_invalid",
        "partitionable-devices-validation-error-on-non-targeting-slice",
        features=PART,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            counters("slice-1", NODE_1, "pool-1", mem("8Gi"), count=3),
            rslice("slice-2", NODE_1, "pool-1", DRIVER_A, part("device-1", mem("6Gi")), count=3),
            rslice(
                "slice-3",
                NODE_2,
                "pool-1",
                DRIVER_A,
                dev("device-3", counters=[(COUNTER_SET_2, {"memory": "6Gi"})]),
                count=3,
            ),
        ],
        expect=INVALID,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_it_gives_upstreams_answer(case: Ported) -> None:
    check(case)
