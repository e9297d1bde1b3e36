"""Upstream's allocator table, ported: device taints and tolerations (DRADeviceTaints), binding
conditions and ``bindsToNode`` (DRADeviceBindingConditions)."""

from __future__ import annotations

import pytest

from tests.dra.upstream_cases import (
    CLASS_A,
    CLASS_A_OBJ,
    CLASS_B,
    CLASS_B_OBJ,
    COUNTER_SET_1,
    COUNTER_SET_2,
    DRIVER_A,
    NODE_1,
    TAINT_NO_EXECUTE,
    TAINT_NO_SCHEDULE,
    TAINT_NONE,
    TOLERATE_KEY1,
    TOLERATE_NO_EXECUTE,
    TOLERATE_NO_SCHEDULE,
    UNSCHEDULABLE,
    J,
    Ported,
    all_req,
    alloc,
    case_ids,
    check,
    dev,
    features,
    first_of,
    labels,
    local,
    req,
    res,
    rslice,
    sub,
    taint,
    uclaim,
)

TAINTS = features("DeviceTaints")
BINDING = features("DeviceBindingAndStatus")
PART_BINDING = features("PartitionableDevices", "DeviceBindingAndStatus")
PREPARE = (["IsPrepare"], ["BindingFailed"])
TWO_TAINTED = [
    rslice(
        "slice-1",
        NODE_1,
        "pool-1",
        DRIVER_A,
        dev("device-1", taints=[TAINT_NO_SCHEDULE]),
        dev("device-2", taints=[TAINT_NO_EXECUTE]),
    )
]
DOUBLY_TAINTED = [
    rslice(
        "slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE])
    )
]
NO_SCHEDULE_ONLY = [
    rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", taints=[TAINT_NO_SCHEDULE]))
]
B_THEN_A = first_of("req-0", sub("subReq-0", CLASS_B), sub("subReq-1", CLASS_A))


def _partition(name: str, memory: str, counter_set: str = COUNTER_SET_1, **kw: object) -> J:
    return dev(name, counters=[(counter_set, {"memory": memory})], capacity_from_counters=True, **kw)  # type: ignore[arg-type]


def _counters(name: str, pool_count: int, counter_set: str = COUNTER_SET_1) -> J:
    return rslice(
        name, NODE_1, "pool-1", DRIVER_A, count=pool_count, counter_sets=[(counter_set, {"memory": "8Gi"})]
    )


KEY1 = taint("NoSchedule", key="key1", value="value1")

CASES: list[Ported] = [
    # ------------------------------------------------------------------ taints
    Ported(
        "untolerated_no_schedule_and_no_execute_taints_block",
        "tainted-two-devices",
        features=TAINTS,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=TWO_TAINTED,
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_device_with_two_untolerated_taints_is_blocked",
        "tainted-one-device-two-taints",
        features=TAINTS,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=DOUBLY_TAINTED,
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_tolerated_taint_does_not_block_and_the_toleration_is_recorded",
        "tainted-two-devices-tolerated",
        features=TAINTS,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, tolerations=[TOLERATE_NO_EXECUTE]))],
        slices=TWO_TAINTED,
        expect=[
            alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-2", tolerations=[TOLERATE_NO_EXECUTE]))
        ],
    ),
    Ported(
        "a_subrequest_tolerates_with_its_own_tolerations",
        "tainted-two-devices-prioritized-list-tolerated",
        features=features("DeviceTaints", "PrioritizedList"),
        claims=[
            uclaim(
                "claim-0",
                first_of(
                    "req-0",
                    sub("subReq-0", CLASS_A),
                    sub("subReq-1", CLASS_A, tolerations=[TOLERATE_NO_EXECUTE]),
                ),
            )
        ],
        slices=TWO_TAINTED,
        expect=[
            alloc(
                local(),
                res("req-0/subReq-1", DRIVER_A, "pool-1", "device-2", tolerations=[TOLERATE_NO_EXECUTE]),
            )
        ],
    ),
    Ported(
        "a_taint_with_effect_none_does_not_block",
        "tainted-no-effect",
        features=TAINTS,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", taints=[TAINT_NONE]))],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "both_taints_tolerated_allows_the_device",
        "tainted-one-device-two-taints-both-tolerated",
        features=TAINTS,
        claims=[
            uclaim("claim-0", req("req-0", CLASS_A, tolerations=[TOLERATE_NO_SCHEDULE, TOLERATE_NO_EXECUTE]))
        ],
        slices=DOUBLY_TAINTED,
        expect=[
            alloc(
                local(),
                res(
                    "req-0",
                    DRIVER_A,
                    "pool-1",
                    "device-1",
                    tolerations=[TOLERATE_NO_SCHEDULE, TOLERATE_NO_EXECUTE],
                ),
            )
        ],
    ),
    Ported(
        "without_the_feature_taints_do_not_block",
        "tainted-disabled",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=DOUBLY_TAINTED,
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "a_taint_blocks_the_subrequest_that_would_take_the_device",
        "tainted-prioritized-list",
        features=features("DeviceTaints", "PrioritizedList"),
        claims=[uclaim("claim-0", B_THEN_A)],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=NO_SCHEDULE_ONLY,
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "without_the_feature_a_taint_does_not_block_a_subrequest",
        "tainted-prioritized-list-disabled",
        features=features("PrioritizedList"),
        claims=[uclaim("claim-0", B_THEN_A)],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=NO_SCHEDULE_ONLY,
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "admin_access_does_not_override_a_taint",
        "tainted-admin-access",
        features=features("DeviceTaints", "AdminAccess"),
        claims=[uclaim("claim-0", req("req-0", CLASS_A, admin=True))],
        allocated=[(DRIVER_A, "pool-1", "device-1"), (DRIVER_A, "pool-1", "device-2")],
        slices=NO_SCHEDULE_ONLY,
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "without_the_taint_feature_admin_access_takes_a_tainted_device",
        "tainted-admin-access-disabled",
        features=features("AdminAccess"),
        claims=[uclaim("claim-0", req("req-0", CLASS_A, admin=True))],
        allocated=[(DRIVER_A, "pool-1", "device-1"), (DRIVER_A, "pool-1", "device-2")],
        slices=NO_SCHEDULE_ONLY,
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1", admin=True))],
    ),
    Ported(
        "all_devices_including_a_tainted_one_is_unschedulable",
        "tainted-all-devices-single",
        features=TAINTS,
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A))],
        slices=NO_SCHEDULE_ONLY,
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "without_the_feature_all_devices_includes_a_tainted_one",
        "tainted-all-devices-single-disabled",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A))],
        slices=NO_SCHEDULE_ONLY,
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    # ------------------------------------------------------------------ binding conditions
    Ported(
        "binding_conditions_are_copied_into_the_result",
        "device-binding-conditions",
        features=BINDING,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", binding=PREPARE))],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1", binding=PREPARE), ordered=True)],
    ),
    Ported(
        "each_device_brings_its_own_binding_conditions",
        "binding-conditions-multiple-devices",
        features=BINDING,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2), req("req-1", CLASS_A))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", binding=PREPARE),
                dev("device-2", binding=(["IsPrepare2"], ["BindingFailed2"])),
                dev("device-3", binding=(["IsPrepare3"], ["BindingFailed3"])),
            )
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1", binding=PREPARE),
                res("req-0", DRIVER_A, "pool-1", "device-2", binding=(["IsPrepare2"], ["BindingFailed2"])),
                res("req-1", DRIVER_A, "pool-1", "device-3", binding=(["IsPrepare3"], ["BindingFailed3"])),
                ordered=True,
            )
        ],
    ),
    Ported(
        "a_device_without_binding_conditions_next_to_one_with",
        "binding-conditions-with-and-without",
        features=BINDING,
        claims=[uclaim("claim-0", req("req-0", CLASS_A), req("req-1", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), dev("device-2", binding=PREPARE))
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1", DRIVER_A, "pool-1", "device-2", binding=PREPARE),
                ordered=True,
            )
        ],
    ),
    Ported(
        "without_the_feature_a_device_with_binding_conditions_is_not_taken",
        "binding-conditions-without-feature-gate",
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", binding=PREPARE))],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "binds_to_node_restricts_a_network_device_to_this_node",
        "node-restriction",
        features=BINDING,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice(
                "slice-1", labels("planet", "earth"), "pool-1", DRIVER_A, dev("device-1", binds_to_node=True)
            )
        ],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "a_partition_with_binding_conditions",
        "partitionable-devices-with-binding-conditions",
        features=PART_BINDING,
        claims=[uclaim("claim-0", req("req-0", CLASS_A))],
        slices=[
            rslice(
                "slice-1", NODE_1, "pool-1", DRIVER_A, _partition("device-1", "4Gi", binding=PREPARE), count=2
            ),
            _counters("slice-2", 2),
        ],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1", binding=PREPARE), ordered=True)],
    ),
    Ported(
        "two_partitions_with_binding_conditions",
        "partitionable-devices-with-binding-conditions-multiple",
        features=PART_BINDING,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                _partition("device-1", "4Gi", binding=PREPARE),
                _partition("device-2", "4Gi", binding=(["IsPrepare2"], ["BindingFailed2"])),
                count=2,
            ),
            _counters("slice-2", 2),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1", binding=PREPARE),
                res("req-0", DRIVER_A, "pool-1", "device-2", binding=(["IsPrepare2"], ["BindingFailed2"])),
                ordered=True,
            )
        ],
    ),
    Ported(
        "partitions_with_and_without_binding_conditions",
        "partitionable-devices-with-binding-conditions-some-devices-no-conditions",
        features=PART_BINDING,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 3))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                _partition("device-1", "2Gi", binding=PREPARE),
                _partition("device-2", "2Gi"),
                _partition("device-3", "4Gi", binding=(["IsReady"], ["BindingTimeout"])),
                count=2,
            ),
            _counters("slice-2", 2),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1", binding=PREPARE),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
                res("req-0", DRIVER_A, "pool-1", "device-3", binding=(["IsReady"], ["BindingTimeout"])),
                ordered=True,
            )
        ],
    ),
    Ported(
        "partitions_of_two_counter_sets_in_four_slices_in_slice_name_order",
        "partitionable-devices-with-binding-conditions-multi-slices",
        features=PART_BINDING,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            rslice(
                "slice-4", NODE_1, "pool-1", DRIVER_A, _partition("device-1", "4Gi", binding=PREPARE), count=4
            ),
            _counters("slice-3", 4),
            rslice(
                "slice-2", NODE_1, "pool-1", DRIVER_A, _partition("device-2", "4Gi", COUNTER_SET_2), count=4
            ),
            _counters("slice-1", 4, COUNTER_SET_2),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
                res("req-0", DRIVER_A, "pool-1", "device-1", binding=PREPARE),
                ordered=True,
            )
        ],
    ),
    Ported(
        "a_pool_whose_counter_slice_is_missing_serves_nothing",
        "partitionable-devices-with-binding-conditions-and-taints",
        features=features("PartitionableDevices", "DeviceBindingAndStatus", "DeviceTaints"),
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                _partition("device-1", "4Gi", binding=PREPARE, taints=[KEY1]),
                _partition("device-2", "4Gi"),
            ),
            _counters("slice-2", 1),
        ],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_tolerated_partition_with_binding_conditions",
        "partitionable-devices-with-binding-conditions-and-taints-tolerated",
        features=features("PartitionableDevices", "DeviceBindingAndStatus", "DeviceTaints"),
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 2, tolerations=[TOLERATE_KEY1]))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                _partition("device-1", "4Gi", binding=PREPARE, taints=[KEY1]),
                _partition("device-2", "4Gi"),
                count=2,
            ),
            _counters("slice-2", 2),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1", binding=PREPARE, tolerations=[TOLERATE_KEY1]),
                res("req-0", DRIVER_A, "pool-1", "device-2", tolerations=[TOLERATE_KEY1]),
                ordered=True,
            )
        ],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_it_gives_upstreams_answer(case: Ported) -> None:
    check(case)
