"""Upstream's allocator table, ported: ``firstAvailable`` subrequests (DRAPrioritizedList) — the order
they are tried in, configuration scoped to them, constraints naming them, ``All`` subrequests and the
32-result limit."""

from __future__ import annotations

import pytest

from tests.dra.upstream_cases import (
    CLASS_A,
    CLASS_A_OBJ,
    CLASS_B,
    CLASS_B_OBJ,
    DRIVER_A,
    DRIVER_B,
    NODE_1,
    NODE_2,
    UNSCHEDULABLE,
    VERSION,
    Error,
    Ported,
    alloc,
    case_ids,
    check,
    claim_config,
    dev,
    device_class,
    devs,
    features,
    first_of,
    from_claim,
    from_class,
    local,
    many,
    match,
    memory_at_least,
    one_device,
    req,
    res,
    rslice,
    s,
    sub,
    uclaim,
    v,
)

PRIO = features("PrioritizedList")
A_AND_B = [CLASS_A_OBJ, CLASS_B_OBJ]


def generation(value: str) -> str:
    return f'device.attributes["{DRIVER_A}"].generation == "{value}"'


V6_OR_V5 = first_of(
    "req-0",
    sub("subReq-0", CLASS_A, 0, generation("v6"), mode="All"),
    sub("subReq-1", CLASS_A, 0, generation("v5"), mode="All"),
)


def _versioned(name: str, memory: str, version: str) -> dict:
    return dev(name, capacity={"memory": memory}, attrs={"driverVersion": v(version)})


MEM_8_OR_2_OR_1 = (
    req("req-0", CLASS_A, 1, memory_at_least("8Gi")),
    first_of(
        "req-1",
        sub("subReq-0", CLASS_A, 1, memory_at_least("2Gi")),
        sub("subReq-1", CLASS_A, 1, memory_at_least("1Gi")),
    ),
)
EIGHT_AND_FOUR = [
    rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", capacity={"memory": "8Gi"}, attrs={})),
    rslice("slice-2", NODE_1, "pool-2", DRIVER_A, dev("device-2", capacity={"memory": "4Gi"}, attrs={})),
]

CASES: list[Ported] = [
    Ported(
        "the_second_subrequest_serves_when_the_first_class_has_no_device",
        "prioritized-list-first-unavailable",
        features=PRIO,
        claims=[uclaim("claim-0", first_of("req-0", sub("subReq-0", CLASS_B), sub("subReq-1", CLASS_A)))],
        classes=A_AND_B,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "no_subrequest_fits_is_unschedulable",
        "prioritized-list-non-available",
        features=PRIO,
        claims=[
            uclaim("claim-0", first_of("req-0", sub("subReq-0", CLASS_B, 2), sub("subReq-1", CLASS_A, 2)))
        ],
        classes=A_AND_B,
        slices=[
            one_device("slice-1", NODE_1, "pool-1", DRIVER_A),
            one_device("slice-2", NODE_1, "pool-2", DRIVER_B),
        ],
        expect=UNSCHEDULABLE,
    ),
    Ported(
        "only_the_claim_config_of_the_chosen_subrequest_is_copied",
        "prioritized-list-device-config",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of("req-0", sub("subReq-0", CLASS_A), sub("subReq-1", CLASS_B, 2)),
                config=[
                    claim_config(["req-0/subReq-0"], DRIVER_A, "foo"),
                    claim_config(["req-0/subReq-1"], DRIVER_B, "bar"),
                ],
            )
        ],
        classes=A_AND_B,
        slices=[
            rslice(
                "slice-1", NODE_1, "pool-1", DRIVER_B, dev("device-1", attrs={}), dev("device-2", attrs={})
            )
        ],
        expect=[
            alloc(
                local(),
                res("req-0/subReq-1", DRIVER_B, "pool-1", "device-1"),
                res("req-0/subReq-1", DRIVER_B, "pool-1", "device-2"),
                config=[from_claim(DRIVER_B, "bar")],
                ordered=True,
            )
        ],
    ),
    Ported(
        "only_the_class_config_of_the_chosen_subrequest_is_copied",
        "prioritized-list-class-config",
        features=PRIO,
        claims=[
            uclaim("claim-0", first_of("req-0", sub("subReq-0", CLASS_A, 2), sub("subReq-1", CLASS_B, 2)))
        ],
        classes=[
            device_class(CLASS_A, DRIVER_A, config="foo"),
            device_class(CLASS_B, DRIVER_B, config="bar"),
        ],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_B, dev("device-1"), dev("device-2")),
            rslice("slice-2", NODE_1, "pool-2", DRIVER_A, dev("device-3")),
        ],
        expect=[
            alloc(
                local(),
                res("req-0/subReq-1", DRIVER_B, "pool-1", "device-1"),
                res("req-0/subReq-1", DRIVER_B, "pool-1", "device-2"),
                config=[from_class(DRIVER_B, "bar")],
                ordered=True,
            )
        ],
    ),
    Ported(
        "a_claim_config_for_the_subrequests_of_one_request_keeps_its_list",
        "claim-config-scoped-to-subrequests-of-one-request",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of("req-0", sub("subReq-0", CLASS_A), sub("subReq-1", CLASS_B)),
                req("req-1", CLASS_A),
                config=[claim_config(["req-0/subReq-0", "req-0/subReq-1"], DRIVER_A, "scoped")],
            )
        ],
        classes=A_AND_B,
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2))],
        expect=[
            alloc(
                local(),
                res("req-0/subReq-0", DRIVER_A, "pool-1", "device-0"),
                res("req-1", DRIVER_A, "pool-1", "device-1"),
                config=[from_claim(DRIVER_A, "scoped", "req-0/subReq-0", "req-0/subReq-1")],
                ordered=True,
            )
        ],
    ),
    Ported(
        "a_claim_config_naming_every_request_drops_its_list",
        "claim-config-covering-all-requests-is-cleared",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of("req-0", sub("subReq-0", CLASS_A), sub("subReq-1", CLASS_B)),
                req("req-1", CLASS_A),
                config=[claim_config(["req-0/subReq-0", "req-1"], DRIVER_A, "all")],
            )
        ],
        classes=A_AND_B,
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2))],
        expect=[
            alloc(
                local(),
                res("req-0/subReq-0", DRIVER_A, "pool-1", "device-0"),
                res("req-1", DRIVER_A, "pool-1", "device-1"),
                config=[from_claim(DRIVER_A, "all")],
                ordered=True,
            )
        ],
    ),
    Ported(
        "subrequest_selectors_pick_the_devices",
        "prioritized-list-subrequests-with-expressions",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A, 1, memory_at_least("1Gi")),
                first_of(
                    "req-1",
                    sub("subReq-0", CLASS_A, 1, memory_at_least("4Gi")),
                    sub("subReq-1", CLASS_A, 2, memory_at_least("2Gi")),
                ),
            )
        ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", capacity={"memory": "2Gi"}),
                dev("device-2", capacity={"memory": "2Gi"}),
                dev("device-3", capacity={"memory": "1Gi"}),
            )
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-3"),
                res("req-1/subReq-1", DRIVER_A, "pool-1", "device-1"),
                res("req-1/subReq-1", DRIVER_A, "pool-1", "device-2"),
            )
        ],
    ),
    Ported(
        "a_constraint_naming_the_parent_request_binds_every_subrequest",
        "prioritized-list-subrequests-with-constraints-ref-parent-request",
        features=PRIO,
        claims=[uclaim("claim-0", *MEM_8_OR_2_OR_1, constraints=[match(VERSION, "req-0", "req-1")])],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, _versioned("device-1", "8Gi", "1.0.0")),
            rslice(
                "slice-2",
                NODE_1,
                "pool-2",
                DRIVER_A,
                _versioned("device-2", "2Gi", "2.0.0"),
                _versioned("device-3", "1Gi", "1.0.0"),
            ),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1/subReq-1", DRIVER_A, "pool-2", "device-3"),
            )
        ],
    ),
    Ported(
        "a_constraint_naming_one_subrequest_binds_only_that_one",
        "prioritized-list-subrequests-with-constraints-ref-sub-request",
        features=PRIO,
        claims=[uclaim("claim-0", *MEM_8_OR_2_OR_1, constraints=[match(VERSION, "req-0", "req-1/subReq-0")])],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, _versioned("device-1", "8Gi", "1.0.0")),
            rslice("slice-2", NODE_1, "pool-2", DRIVER_A, _versioned("device-2", "2Gi", "2.0.0")),
        ],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1/subReq-1", DRIVER_A, "pool-2", "device-2"),
            )
        ],
    ),
    Ported(
        "an_all_subrequest_with_a_device_in_use_gives_way_to_the_next",
        "prioritized-list-subrequests-with-allocation-mode-all",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of("req-0", sub("subReq-0", CLASS_A, 0, mode="All"), sub("subReq-1", CLASS_A)),
            )
        ],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1))],
        allocated=[(DRIVER_A, "pool-1", "device-1")],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-2"))],
    ),
    Ported(
        "an_all_subrequest_after_a_request_gives_way_to_the_next",
        "prioritized-list-allocation-mode-all-multiple-requests",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                req("req-0", CLASS_A),
                first_of("req-1", sub("subReq-0", CLASS_A, 0, mode="All"), sub("subReq-1", CLASS_A)),
            )
        ],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1))],
        expect=[
            alloc(
                local(),
                res("req-0", DRIVER_A, "pool-1", "device-1"),
                res("req-1/subReq-1", DRIVER_A, "pool-1", "device-2"),
            )
        ],
    ),
    Ported(
        "subrequests_need_their_feature",
        "prioritized-list-disabled",
        claims=[uclaim("claim-0", first_of("req-0", sub("subReq-0", CLASS_A)))],
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=Error(
            "claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled"
        ),
    ),
    Ported(
        "an_earlier_request_takes_the_best_device_and_the_list_settles_for_less",
        "prioritized-list-multi-request",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                req("req-1", CLASS_A, 1, memory_at_least("8Gi")),
                first_of(
                    "req-0",
                    sub("subReq-0", CLASS_A, 1, memory_at_least("8Gi")),
                    sub("subReq-1", CLASS_A, 1, memory_at_least("4Gi")),
                ),
            )
        ],
        slices=EIGHT_AND_FOUR,
        expect=[
            alloc(
                local(),
                res("req-1", DRIVER_A, "pool-1", "device-1"),
                res("req-0/subReq-1", DRIVER_A, "pool-2", "device-2"),
            )
        ],
    ),
    Ported(
        "the_list_gives_up_its_first_choice_for_a_later_request",
        "prioritized-list-with-backtracking",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of(
                    "req-0",
                    sub("subReq-0", CLASS_A, 1, memory_at_least("8Gi")),
                    sub("subReq-1", CLASS_A, 1, memory_at_least("4Gi")),
                ),
                req("req-1", CLASS_A, 1, memory_at_least("8Gi")),
            )
        ],
        slices=EIGHT_AND_FOUR,
        expect=[
            alloc(
                local(),
                res("req-0/subReq-1", DRIVER_A, "pool-2", "device-2"),
                res("req-1", DRIVER_A, "pool-1", "device-1"),
            )
        ],
    ),
    Ported(
        "a_first_subrequest_over_the_limit_gives_way_to_the_next",
        "prioritized-list-too-many-in-first-subrequest",
        features=PRIO,
        claims=[
            uclaim("claim-0", first_of("req-0", sub("subReq-0", CLASS_B, 500), sub("subReq-1", CLASS_A)))
        ],
        classes=A_AND_B,
        slices=[one_device("slice-1", NODE_1, "pool-1", DRIVER_A)],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "an_all_subrequest_that_cannot_have_every_device_gives_way",
        "prioritized-list-allocation-mode-all",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of("req-0", sub("subReq-0", CLASS_A, 0, mode="All"), sub("subReq-1", CLASS_A)),
            )
        ],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(2, 1))],
        allocated=[(DRIVER_A, "pool-1", "device-2")],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "an_all_subrequest_selecting_nothing_gives_way",
        "prioritized-list-allocation-mode-all-with-selectors",
        features=PRIO,
        claims=[uclaim("claim-0", V6_OR_V5)],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", attrs={"generation": s("v5")}))
        ],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "an_all_subrequest_takes_its_devices_from_every_pool",
        "prioritized-list-allocation-mode-all-with-selectors-multiple-pools",
        features=PRIO,
        claims=[uclaim("claim-0", V6_OR_V5)],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", attrs={"generation": s("v5")})),
            rslice("slice-2", NODE_1, "pool-2", DRIVER_A, dev("device-1", attrs={"generation": s("v5")})),
        ],
        expect=[
            alloc(
                local(),
                res("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"),
                res("req-0/subReq-1", DRIVER_A, "pool-2", "device-1"),
            )
        ],
    ),
    Ported(
        "an_all_subrequest_takes_only_this_nodes_devices",
        "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes",
        features=PRIO,
        claims=[uclaim("claim-0", V6_OR_V5)],
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, dev("device-1", attrs={"generation": s("v5")})),
            rslice(
                "slice-2",
                NODE_2,
                "pool-2",
                DRIVER_A,
                dev("device-1", attrs={"generation": s("v5")}),
                dev("device-2", attrs={"generation": s("v6")}),
            ),
        ],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"))],
    ),
    Ported(
        "an_all_subrequest_takes_only_what_its_class_selects",
        "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset",
        features=PRIO,
        claims=[uclaim("claim-0", V6_OR_V5)],
        classes=[
            device_class(
                CLASS_A,
                DRIVER_A,
                expression=f'device.driver == "{DRIVER_A}" && device.attributes["{DRIVER_A}"].selected',
            )
        ],
        slices=[
            rslice(
                "slice-1",
                NODE_1,
                "pool-1",
                DRIVER_A,
                dev("device-1", attrs={"generation": s("v6"), "selected": {"bool": False}}),
                dev("device-2", attrs={"generation": s("v5"), "selected": {"bool": False}}),
                dev("device-3", attrs={"generation": s("v5"), "selected": {"bool": True}}),
            )
        ],
        expect=[alloc(local(), res("req-0/subReq-1", DRIVER_A, "pool-1", "device-3"))],
    ),
    Ported(
        "two_lists_settle_for_halves_to_stay_within_32_results",
        "prioritized-list-max-allocation-limit-request",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of("req-0", sub("subReq-0", CLASS_A, 32), sub("subReq-1", CLASS_A, 16)),
                first_of("req-1", sub("subReq-0", CLASS_A, 32), sub("subReq-1", CLASS_A, 16)),
            )
        ],
        slices=[rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(64))],
        expect=[
            alloc(
                local(),
                *many("req-0/subReq-1", DRIVER_A, "pool-1", 16),
                *many("req-1/subReq-1", DRIVER_A, "pool-1", 16, 16),
            )
        ],
        steps=75,
    ),
    Ported(
        "an_all_subrequest_of_31_devices_gives_way_to_stay_within_32_results",
        "prioritized-list-max-allocation-allocation-mode-all",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of("req-0", sub("subReq-0", CLASS_A, 0, mode="All"), sub("subReq-1", CLASS_A, 2)),
                req("req-1", CLASS_B, 2),
            )
        ],
        classes=A_AND_B,
        slices=[
            rslice("slice-1", NODE_1, "pool-1", DRIVER_A, *devs(31)),
            rslice("slice-2", NODE_1, "pool-2", DRIVER_B, *devs(2)),
        ],
        expect=[
            alloc(
                local(),
                res("req-0/subReq-1", DRIVER_A, "pool-1", "device-0"),
                res("req-0/subReq-1", DRIVER_A, "pool-1", "device-1"),
                res("req-1", DRIVER_B, "pool-2", "device-0"),
                res("req-1", DRIVER_B, "pool-2", "device-1"),
            )
        ],
        steps=42,
    ),
    Ported(
        "backtracks_through_two_lists",
        "check-combinations-with-prioritized-list",
        features=PRIO,
        claims=[
            uclaim(
                "claim-0",
                first_of(
                    "req-1",
                    sub("subReq-0", CLASS_A, 3, f'device.attributes["{DRIVER_A}"].type == "Y"'),
                    sub("subReq-1", CLASS_A, 2),
                ),
                first_of(
                    "req-2",
                    sub("subReq-0", CLASS_A, 2),
                    sub("subReq-1", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].type == "X"'),
                ),
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
                res("req-1/subReq-1", DRIVER_A, "pool-1", "device-2"),
                res("req-1/subReq-1", DRIVER_A, "pool-1", "device-3"),
                res("req-2/subReq-1", DRIVER_A, "pool-1", "device-1"),
            )
        ],
        steps=26,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_it_gives_upstreams_answer(case: Ported) -> None:
    check(case)
