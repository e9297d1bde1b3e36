"""The allocator's documented behaviour, continued: taints, partitionable devices, consumable capacity,
binding conditions and configuration (the case table of ``test_allocator.py``)."""

from __future__ import annotations

import pytest

from dra.allocator import DEFAULT_FEATURES
from tests.dra.allocator_cases import (
    COUNTERS,
    DRIVER,
    NO_CC,
    TAINT_NE,
    TAINT_NS,
    TOLERATE_BROKEN,
    Case,
    Error,
    allocated,
    check_case,
    claim,
    device,
    device_class,
    exactly,
    node_name_selector,
    partitioned,
    resource_slice,
    result,
    shared_nic,
    taint_rule,
)

RESOURCE_CASES: list[Case] = [
    # ---------------------------------------------------------------- taints
    Case(
        "no_schedule_taint_blocks_allocation",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", [device("gpu-0", taints=[TAINT_NS]), device("gpu-1")])],
        expect=[["gpu=gpu-1"]],
    ),
    Case(
        "no_execute_taint_blocks_allocation",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", [device("gpu-0", taints=[TAINT_NE])])],
        expect=None,
    ),
    Case(
        "none_effect_taint_does_not_block",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", [device("gpu-0", taints=[{**TAINT_NS, "effect": "None"}])])],
        expect=[["gpu=gpu-0"]],
    ),
    Case(
        "unknown_taint_effect_does_not_block",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", [device("gpu-0", taints=[{**TAINT_NS, "effect": "SomeFutureEffect"}])])],
        expect=[["gpu=gpu-0"]],
    ),
    Case(
        "tolerated_taint_allows_allocation_and_tolerations_are_copied",
        [claim("c", exactly("gpu", tolerations=TOLERATE_BROKEN))],
        slices=[resource_slice("s", [device("gpu-0", taints=[TAINT_NE])])],
        expect=[
            {
                "devices": {"results": [result("gpu-0", request="gpu", tolerations=TOLERATE_BROKEN)]},
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
    Case(
        "toleration_with_another_value_does_not_tolerate",
        [
            claim(
                "c",
                exactly(
                    "gpu", tolerations=[{"key": "example.com/broken", "operator": "Equal", "value": "fan"}]
                ),
            )
        ],
        slices=[resource_slice("s", [device("gpu-0", taints=[TAINT_NS])])],
        expect=None,
    ),
    Case(
        "toleration_for_another_effect_does_not_tolerate",
        [
            claim(
                "c",
                exactly(
                    "gpu",
                    tolerations=[{"key": "example.com/broken", "operator": "Exists", "effect": "NoSchedule"}],
                ),
            )
        ],
        slices=[resource_slice("s", [device("gpu-0", taints=[TAINT_NE])])],
        expect=None,
    ),
    Case(
        "taint_rule_taints_the_selected_device",
        [claim("c", exactly("gpu"))],
        rules=[taint_rule("drain-gpu-0", TAINT_NE, {"driver": DRIVER, "pool": "node-1", "device": "gpu-0"})],
        expect=[["gpu=gpu-1"]],
    ),
    Case(
        "taint_rule_with_empty_selector_taints_every_device",
        [claim("c", exactly("gpu"))],
        rules=[taint_rule("drain-all", TAINT_NS, {})],
        expect=None,
    ),
    Case(
        "taint_rule_without_selector_taints_nothing",
        [claim("c", exactly("gpu"))],
        rules=[taint_rule("no-selector", TAINT_NS, None)],
        expect=[["gpu=gpu-0"]],
    ),
    Case(
        "taint_rules_are_ignored_without_the_feature",
        [claim("c", exactly("gpu"))],
        rules=[taint_rule("drain-all", TAINT_NS, {})],
        features=DEFAULT_FEATURES - {"DeviceTaintRules"},
        expect=[["gpu=gpu-0"]],
    ),
    Case(
        "taints_are_ignored_without_the_feature",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", [device("gpu-0", taints=[TAINT_NE])])],
        features=DEFAULT_FEATURES - {"DeviceTaints"},
        expect=[["gpu=gpu-0"]],
    ),
    Case(
        "admin_access_must_tolerate_taints_too",
        [claim("c", exactly("gpu", adminAccess=True))],
        slices=[resource_slice("s", [device("gpu-0", taints=[TAINT_NS])])],
        expect=None,
    ),
    # ---------------------------------------------------------------- partitionable devices
    Case(
        "partitions_share_counters_within_one_claim",
        [claim("c", exactly("a"), exactly("b"), exactly("c"))],
        slices=partitioned(),
        expect=None,
    ),
    Case(
        "counters_leave_room_for_the_two_halves",
        [claim("c", exactly("gpu", count=2, selectors=('device.driver == "gpu.example.com"',)))],
        slices=partitioned(),
        expect=[["gpu=half-0", "gpu=half-1"]],
    ),
    Case(
        "counters_consumed_by_allocated_devices_on_other_nodes_count",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("shared-counters", [], pool="shared", node=None, count=3, sharedCounters=COUNTERS),
            *[
                resource_slice(
                    f"shared-{n}",
                    [
                        device(
                            f"{n}-part",
                            consumesCounters=[
                                {"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "50Gi"}}}
                            ],
                        )
                    ],
                    pool="shared",
                    node=n,
                    count=3,
                )
                for n in ("node-1", "node-2")
            ],
        ],
        allocated=[allocated("elsewhere", result("node-2-part", pool="shared"))],
        expect=None,
    ),
    Case(
        "slices_with_counters_are_skipped_without_partitionable_devices",
        [claim("c", exactly("gpu"))],
        slices=partitioned(),
        features=DEFAULT_FEATURES - {"PartitionableDevices"},
        expect=None,
    ),
    # ---------------------------------------------------------------- consumable capacity
    Case(
        "multi_allocatable_device_gets_share_id_and_consumed_capacity",
        [claim("c", exactly("nic", capacity={"requests": {"bandwidth": "10G"}}))],
        slices=shared_nic({"bandwidth": "100G"}),
        expect=[
            {
                "devices": {
                    "results": [
                        result(
                            "nic-0",
                            request="nic",
                            shareID="00000000-0000-4000-8000-000000000001",
                            consumedCapacity={"bandwidth": "10G"},
                        )
                    ]
                },
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
    Case(
        "multi_allocatable_device_serves_several_requests",
        [
            claim(
                "c",
                exactly("a", capacity={"requests": {"bandwidth": "40G"}}),
                exactly("b", capacity={"requests": {"bandwidth": "60G"}}),
            )
        ],
        slices=shared_nic({"bandwidth": "100G"}),
        expect=[["a=nic-0", "b=nic-0"]],
    ),
    Case(
        "capacity_in_use_by_allocated_claims_counts",
        [claim("c", exactly("nic", capacity={"requests": {"bandwidth": "50G"}}))],
        slices=shared_nic({"bandwidth": "100G"}),
        allocated=[allocated("old", result("nic-0", shareID="aaaa", consumedCapacity={"bandwidth": "60G"}))],
        expect=None,
    ),
    Case(
        "capacity_without_request_takes_the_whole_device",
        [claim("c", exactly("a"), exactly("b", capacity={"requests": {"bandwidth": "1G"}}))],
        slices=shared_nic({"bandwidth": "100G"}),
        expect=None,
    ),
    Case(
        "capacity_default_applies_when_not_requested",
        [claim("c", exactly("nic"))],
        slices=shared_nic(
            {"bandwidth": {"value": "100G", "requestPolicy": {"default": "5G", "validRange": {"min": "1G"}}}}
        ),
        expect=[
            {
                "devices": {
                    "results": [
                        result(
                            "nic-0",
                            request="nic",
                            shareID="00000000-0000-4000-8000-000000000001",
                            consumedCapacity={"bandwidth": "5G"},
                        )
                    ]
                },
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
    Case(
        "capacity_request_rounds_up_to_the_range_step",
        [claim("c", exactly("nic", capacity={"requests": {"memory": "5Gi"}}))],
        slices=shared_nic(
            {"memory": {"value": "64Gi", "requestPolicy": {"validRange": {"min": "4Gi", "step": "4Gi"}}}}
        ),
        expect=[
            {
                "devices": {
                    "results": [
                        result(
                            "nic-0",
                            request="nic",
                            shareID="00000000-0000-4000-8000-000000000001",
                            consumedCapacity={"memory": "8Gi"},
                        )
                    ]
                },
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
    Case(
        "capacity_request_rounds_up_to_a_valid_value",
        [claim("c", exactly("nic", capacity={"requests": {"slots": "3"}}))],
        slices=shared_nic({"slots": {"value": "16", "requestPolicy": {"validValues": ["1", "4", "8"]}}}),
        expect=[
            {
                "devices": {
                    "results": [
                        result(
                            "nic-0",
                            request="nic",
                            shareID="00000000-0000-4000-8000-000000000001",
                            consumedCapacity={"slots": "4"},
                        )
                    ]
                },
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
    Case(
        "capacity_request_above_the_range_max_is_refused",
        [claim("c", exactly("nic", capacity={"requests": {"memory": "40Gi"}}))],
        slices=shared_nic(
            {"memory": {"value": "64Gi", "requestPolicy": {"validRange": {"min": "4Gi", "max": "32Gi"}}}}
        ),
        expect=None,
    ),
    Case(
        "capacity_request_for_a_capacity_the_device_lacks_skips_it",
        [claim("c", exactly("nic", capacity={"requests": {"memory": "1Gi"}}))],
        slices=shared_nic({"bandwidth": "100G"}),
        expect=None,
    ),
    Case(
        "capacity_request_filters_exclusive_devices",
        [claim("c", exactly("gpu", capacity={"requests": {"memory": "100Gi"}}))],
        slices=[
            resource_slice(
                "s",
                [device("small", capacity={"memory": "80Gi"}), device("big", capacity={"memory": "141Gi"})],
            )
        ],
        expect=[["gpu=big"]],
    ),
    Case(
        "capacity_requests_need_consumable_capacity",
        [claim("c", exactly("gpu", capacity={"requests": {"memory": "1Gi"}}))],
        features=NO_CC,
        expect=Error("ConsumableCapacity feature is disabled"),
    ),
    Case(
        "multi_allocation_is_exclusive_without_consumable_capacity",
        [claim("a", exactly("nic")), claim("b", exactly("nic"))],
        slices=shared_nic({"bandwidth": "100G"}),
        features=NO_CC,
        expect=None,
    ),
    Case(
        "multi_allocatable_device_consumes_its_counters_only_once",
        [claim("c", exactly("nic", capacity={"requests": {"bandwidth": "10G"}}))],
        slices=[
            resource_slice("counters", [], node=None, count=2, sharedCounters=COUNTERS),
            resource_slice(
                "nics",
                [
                    device(
                        "nic-0",
                        allowMultipleAllocations=True,
                        capacity={"bandwidth": "100G"},
                        consumesCounters=[
                            {"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "80Gi"}}}
                        ],
                    )
                ],
                count=2,
            ),
        ],
        allocated=[
            allocated("first", result("nic-0", shareID="aaaa", consumedCapacity={"bandwidth": "10G"}))
        ],
        expect=[["nic=nic-0"]],
    ),
    Case(
        # Upstream takes the tainted device's counters before looking at its taints and does not
        # give them back for the rest of the attempt, so the healthy full device does not fit.
        "counters_of_a_device_refused_for_a_taint_stay_taken",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("counters", [], node=None, count=2, sharedCounters=COUNTERS),
            resource_slice(
                "parts",
                [
                    device(
                        "tainted-full",
                        taints=[TAINT_NS],
                        consumesCounters=[
                            {"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "80Gi"}}}
                        ],
                    ),
                    device(
                        "healthy-full",
                        consumesCounters=[
                            {"counterSet": "gpu-0-mem", "counters": {"memory": {"value": "80Gi"}}}
                        ],
                    ),
                ],
                count=2,
            ),
        ],
        expect=None,
    ),
    # ---------------------------------------------------------------- binding conditions, config
    Case(
        "binding_conditions_are_copied_and_timestamped",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice(
                "s",
                [
                    device(
                        "gpu-0",
                        bindingConditions=["Attached"],
                        bindingFailureConditions=["AttachFailed"],
                        bindsToNode=True,
                    )
                ],
                pool="fabric",
                allNodes=True,
            )
        ],
        expect=[
            {
                "devices": {
                    "results": [
                        result(
                            "gpu-0",
                            request="gpu",
                            pool="fabric",
                            bindingConditions=["Attached"],
                            bindingFailureConditions=["AttachFailed"],
                        )
                    ]
                },
                "nodeSelector": node_name_selector(),
                "allocationTimestamp": "2026-11-29T12:00:00Z",
            }
        ],
    ),
    Case(
        "devices_with_binding_conditions_need_the_feature",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", [device("gpu-0", bindingConditions=["Attached"])])],
        features=DEFAULT_FEATURES - {"DeviceBindingAndStatus"},
        expect=None,
    ),
    Case(
        "class_config_comes_before_claim_config",
        [
            claim(
                "c",
                exactly("a"),
                exactly("b", cls="other"),
                config=[
                    {"requests": ["b"], "opaque": {"driver": DRIVER, "parameters": {"claim": "b"}}},
                    {"opaque": {"driver": DRIVER, "parameters": {"claim": "all"}}},
                ],
            )
        ],
        classes=[
            device_class("gpu", config=[{"opaque": {"driver": DRIVER, "parameters": {"class": "gpu"}}}]),
            device_class("other"),
        ],
        expect=[
            {
                "devices": {
                    "results": [result("gpu-0", request="a"), result("gpu-1", request="b")],
                    "config": [
                        {
                            "source": "FromClass",
                            "requests": ["a"],
                            "opaque": {"driver": DRIVER, "parameters": {"class": "gpu"}},
                        },
                        {
                            "source": "FromClaim",
                            "requests": ["b"],
                            "opaque": {"driver": DRIVER, "parameters": {"claim": "b"}},
                        },
                        {"source": "FromClaim", "opaque": {"driver": DRIVER, "parameters": {"claim": "all"}}},
                    ],
                },
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
    Case(
        "class_config_covering_every_request_omits_the_request_list",
        [claim("c", exactly("a"), exactly("b"))],
        classes=[device_class("gpu", config=[{"opaque": {"driver": DRIVER, "parameters": {}}}])],
        expect=[
            {
                "devices": {
                    "results": [result("gpu-0", request="a"), result("gpu-1", request="b")],
                    "config": [{"source": "FromClass", "opaque": {"driver": DRIVER, "parameters": {}}}],
                },
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
]


@pytest.mark.parametrize("case", RESOURCE_CASES, ids=[c.name for c in RESOURCE_CASES])
def test_it_allocates_as_documented(case: Case) -> None:
    check_case(case)
