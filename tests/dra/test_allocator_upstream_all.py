"""Upstream's allocator table, ported: ``allocationMode: All``."""

from __future__ import annotations

import pytest

from tests.dra.upstream_cases import (
    CLASS_A,
    CLASS_A_OBJ,
    CLASS_B,
    CLASS_B_OBJ,
    COUNTER_SET_1,
    DRIVER_A,
    DRIVER_B,
    NODE_1,
    NODE_2,
    UNSCHEDULABLE,
    Error,
    Ported,
    all_req,
    alloc,
    case_ids,
    check,
    dev,
    devs,
    features,
    first_of,
    local,
    one_device,
    req,
    res,
    rslice,
    sub,
    uclaim,
)

ONE_A_ONE_B = [
    one_device("slice-1", NODE_1, "pool-1", DRIVER_A),
    one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
]
TWO_A_ONE_B = [
    rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1)),
    one_device("slice-1", NODE_1, "pool-1", DRIVER_B),
]
ADMIN = features("AdminAccess")
PRIO = features("PrioritizedList")
ALL_OR_B = first_of("req-0", sub("subReq-0", CLASS_A, 0, mode="All"), sub("subReq-1", CLASS_B, 1))

CASES: list[Ported] = [
    Ported(
        "all_takes_the_one_device",
        "all-devices-single",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A))],
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "all_takes_a_device_that_consumes_counters",
        "all-devices-with-consumed-counters",
        features=features("PartitionableDevices"),
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A))],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", counters=[(COUNTER_SET_1, {"memory": "4Gi"})]),
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
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "all_takes_devices_of_every_pool",
        "all-devices-many",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A))],
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_A),
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
    Ported(
        "all_with_an_incomplete_pool_is_an_error",
        "all-devices-of-the-incomplete-pool",
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 1, mode="All"))],
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A, count=2)],
        expect=Error(
            "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being"
            " updated"
        ),
    ),
    Ported(
        "all_then_a_device_of_another_driver",
        "all-devices-plus-another",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A)), uclaim("claim-1", req("req-0", CLASS_B))],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=ONE_A_ONE_B,
        expect=[
            alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1")),
            alloc(local(), res("req-0", DRIVER_B, "pool-1", "device-1")),
        ],
    ),
    Ported(
        "a_device_of_another_driver_then_all",
        "all-devices-plus-another-reversed",
        claims=[uclaim("claim-1", req("req-0", CLASS_B)), uclaim("claim-0", all_req("req-0", CLASS_A))],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=ONE_A_ONE_B,
        expect=[
            alloc(local(), res("req-0", DRIVER_B, "pool-1", "device-1")),
            alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1")),
        ],
    ),
    Ported(
        "all_of_two_then_a_device_of_another_driver",
        "all-devices-many-plus-another",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A)), uclaim("claim-1", req("req-0", CLASS_B))],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=TWO_A_ONE_B,
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
            ),
            alloc(local(), res("req-0", DRIVER_B, "pool-1", "device-1")),
        ],
    ),
    Ported(
        "a_device_of_another_driver_then_all_of_two",
        "all-devices-many-plus-another-reversed",
        claims=[uclaim("claim-1", req("req-0", CLASS_B)), uclaim("claim-0", all_req("req-0", CLASS_A))],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=TWO_A_ONE_B,
        expect=[
            alloc(local(), res("req-0", DRIVER_B, "pool-1", "device-1")),
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-0", DRIVER_A, "pool-1", "device-2"),
            ),
        ],
    ),
    Ported(
        "all_cannot_have_a_device_an_earlier_claim_took",
        "all-devices-no-solution",
        claims=[uclaim("claim-1", req("req-0", CLASS_A)), uclaim("claim-0", all_req("req-0", CLASS_A))],
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "a_later_claim_cannot_have_a_device_all_took",
        "all-devices-no-solution-reversed",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A)), uclaim("claim-1", req("req-0", CLASS_A))],
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "all_of_no_devices_is_unschedulable",
        "all-devices-slice-without-devices",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A))],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "all_without_slices_is_unschedulable",
        "all-devices-no-slices",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A))],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "all_cannot_have_a_device_in_use",
        "all-devices-some-allocated",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A))],
        allocated=[(DRIVER_A, "pool-1", "device-1")],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1))],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "all_with_admin_access_includes_devices_in_use",
        "all-devices-some-allocated-admin-access",
        features=ADMIN,
        claims=[uclaim("claim-0", req("req-0", CLASS_A, 1, mode="All", admin=True))],
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
        "admin_all_cannot_take_a_device_its_own_claim_took",
        "all-devices-some-allocating-admin-access",
        features=ADMIN,
        claims=[
            uclaim(
                "claim-0", req("req-0", CLASS_A, admin=True), req("req-1", CLASS_A, 1, mode="All", admin=True)
            )
        ],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1))],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "all_of_an_empty_slice_falls_back_to_the_next_subrequest",
        "all-devices-slice-without-devices-prioritized-list",
        features=PRIO,
        claims=[uclaim("claim-0", ALL_OR_B)],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A),
            one_device("slice-2", NODE_1, "pool-2", DRIVER_B),
        ],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_B, "pool-2", "device-1"))],
    ),
    Ported(
        "all_without_slices_falls_back_to_the_next_subrequest",
        "all-devices-no-slices-prioritized-list",
        features=PRIO,
        claims=[uclaim("claim-0", ALL_OR_B)],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        slices=[one_device("slice-2", NODE_1, "pool-2", DRIVER_B)],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_B, "pool-2", "device-1"))],
    ),
    Ported(
        "all_with_a_device_in_use_falls_back_to_the_next_subrequest",
        "all-devices-some-allocated-prioritized-list",
        features=PRIO,
        claims=[uclaim("claim-0", ALL_OR_B)],
        classes=[CLASS_A_OBJ, CLASS_B_OBJ],
        allocated=[(DRIVER_A, "pool-1", "device-1")],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1)),
            one_device("slice-2", NODE_1, "pool-2", DRIVER_B),
        ],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_B, "pool-2", "device-1"))],
    ),
    Ported(
        "all_takes_only_the_devices_of_this_node_from_a_pool_over_nodes",
        "allocation-mode-all-with-multi-host-resource-pool",
        claims=[uclaim("claim-0", all_req("req-0", CLASS_A))],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1"), count=2),
            rslice("slice-2", NODE_2, "pool-1", DRIVER_A, dev("device-2"), count=2),
        ],
        expect=[alloc(local(), res("req-0", DRIVER_A, "pool-1", "device-1"))],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_it_gives_upstreams_answer(case: Ported) -> None:
    check(case)
