"""The allocator's documented behaviour, one named case per rule (upstream-style table)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from dra.allocator import DEFAULT_FEATURES, AllocationError, SelectorBackend, allocate
from dra.allocator.cel import BACKEND_NAMES, CelError, backend, device_input_from_api
from tests.dra.allocator_cases import (
    DRIVER,
    GPU_CLASS,
    NODE,
    J,
    allocated,
    claim,
    device,
    device_class,
    devices,
    exactly,
    first_available,
    node_name_selector,
    resource_slice,
    result,
    sub,
    taint_rule,
)

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
FOUR_GPUS = [resource_slice("node-1-gpus", devices("gpu-0", "gpu-1", "gpu-2", "gpu-3"))]
NUMA_GPUS = [
    resource_slice(
        "node-1-gpus",
        [
            device(f"gpu-{i}", attrs={"resource.kubernetes.io/numaNode": i % 2, "model": "h200"})
            for i in range(4)
        ],
    )
]
NO_CC = DEFAULT_FEATURES - {"ConsumableCapacity"}


@dataclass
class Error:
    substring: str


@dataclass
class Case:
    name: str
    claims: list[J]
    slices: list[J] = field(default_factory=lambda: FOUR_GPUS)
    # Compact: per claim, "request=device" strings; or full allocation dicts; or None; or Error.
    expect: list[list[str]] | list[J] | None | Error = None
    classes: list[J] = field(default_factory=lambda: [GPU_CLASS])
    allocated: list[J] = field(default_factory=list)
    rules: list[J] = field(default_factory=list)
    node: J | None = field(default_factory=lambda: NODE)
    features: frozenset[str] = DEFAULT_FEATURES


TAINT_NS = {"key": "example.com/broken", "value": "ecc", "effect": "NoSchedule"}
TAINT_NE = {"key": "example.com/broken", "value": "ecc", "effect": "NoExecute"}
TOLERATE_BROKEN = [{"key": "example.com/broken", "operator": "Exists"}]
COUNTERS = [{"name": "gpu-0-mem", "counters": {"memory": {"value": "80Gi"}}}]


def partitioned(pool: str = "node-1", node: str | None = "node-1", prefix: str = "") -> list[J]:
    """One physical GPU (80Gi) offered as a full device or as two 40Gi halves."""

    def part(name: str, mem: str) -> J:
        return device(
            prefix + name,
            consumesCounters=[{"counterSet": "gpu-0-mem", "counters": {"memory": {"value": mem}}}],
        )

    return [
        resource_slice(f"{pool}-counters", [], pool=pool, node=None, count=2, sharedCounters=COUNTERS),
        resource_slice(
            f"{pool}-parts",
            [part("full", "80Gi"), part("half-0", "40Gi"), part("half-1", "40Gi")],
            pool=pool,
            node=node,
            count=2,
        ),
    ]


def shared_nic(capacity: J) -> list[J]:
    return [
        resource_slice(
            "node-1-nics",
            [device("nic-0", allowMultipleAllocations=True, capacity=capacity)],
        )
    ]


CASES: list[Case] = [
    # ---------------------------------------------------------------- basics
    Case("allocates_the_first_device_in_slice_order", [claim("c", exactly("gpu"))], expect=[["gpu=gpu-0"]]),
    Case(
        "class_selector_filters_devices",
        [claim("c", exactly("gpu", cls="odd"))],
        classes=[device_class("odd", 'device.attributes["resource.kubernetes.io"].numaNode == 1')],
        slices=NUMA_GPUS,
        expect=[["gpu=gpu-1"]],
    ),
    Case(
        "request_selector_filters_devices",
        [claim("c", exactly("gpu", selectors=(f'device.attributes["{DRIVER}"].model == "h200"',)))],
        slices=[
            resource_slice(
                "s", [device("a100-0", attrs={"model": "a100"}), device("h200-0", attrs={"model": "h200"})]
            )
        ],
        expect=[["gpu=h200-0"]],
    ),
    Case(
        "no_match_for_class_selector_is_none",
        [claim("c", exactly("gpu", cls="other"))],
        classes=[device_class("other", 'device.driver == "nic.example.com"')],
        expect=None,
    ),
    Case(
        "exact_count_takes_that_many_devices",
        [claim("c", exactly("gpu", count=3))],
        expect=[["gpu=gpu-0", "gpu=gpu-1", "gpu=gpu-2"]],
    ),
    Case("count_larger_than_available_is_none", [claim("c", exactly("gpu", count=5))], expect=None),
    Case(
        "devices_in_use_by_allocated_claims_are_skipped",
        [claim("c", exactly("gpu", count=2))],
        allocated=[allocated("old", result("gpu-0"), result("gpu-2"))],
        expect=[["gpu=gpu-1", "gpu=gpu-3"]],
    ),
    Case(
        "claims_in_one_call_do_not_share_devices",
        [claim("a", exactly("gpu", count=2)), claim("b", exactly("gpu", count=2))],
        expect=[["gpu=gpu-0", "gpu=gpu-1"], ["gpu=gpu-2", "gpu=gpu-3"]],
    ),
    Case(
        "claims_in_one_call_are_all_or_nothing",
        [claim("a", exactly("gpu", count=3)), claim("b", exactly("gpu", count=2))],
        expect=None,
    ),
    Case(
        "claim_with_several_requests_gets_devices_per_request",
        [claim("c", exactly("a"), exactly("b", count=2))],
        expect=[["a=gpu-0", "b=gpu-1", "b=gpu-2"]],
    ),
    Case(
        "missing_device_class_is_an_error",
        [claim("c", exactly("gpu", cls="nope"))],
        expect=Error("device class nope not found"),
    ),
    Case(
        "unknown_allocation_mode_is_an_error",
        [claim("c", exactly("gpu", allocationMode="Some"))],
        expect=Error("unsupported allocation mode 'Some'"),
    ),
    Case(
        "empty_constraint_is_an_error",
        [claim("c", exactly("gpu"), constraints=[{"requests": ["gpu"]}])],
        expect=Error("empty constraint"),
    ),
    Case(
        "unknown_request_field_is_refused",
        [claim("c", exactly("gpu", priority=3))],
        expect=Error("unsupported field(s) priority"),
    ),
    Case(
        "unknown_constraint_field_is_refused",
        [claim("c", exactly("gpu"), constraints=[{"matchAttribute": "x.example.com/a", "fuzzy": True}])],
        expect=Error("unsupported field(s) fuzzy"),
    ),
    Case(
        "derived_attributes_are_refused",
        [claim("c", exactly("gpu", derivedAttributes=[{"name": "derived/numa", "expression": "1"}]))],
        expect=Error("derivedAttributes: not supported"),
    ),
    Case(
        "more_than_32_devices_per_claim_is_an_error",
        [claim("c", exactly("gpu", count=30), exactly("more", count=3))],
        expect=Error("exceeds the claim limit of 32"),
    ),
    Case(
        "cel_runtime_error_aborts_allocation",
        [claim("c", exactly("gpu", selectors=(f'device.attributes["{DRIVER}"].missing == 1',)))],
        expect=Error("CEL runtime error"),
    ),
    Case(
        "cel_compile_error_names_the_selector",
        [claim("c", exactly("gpu", selectors=("device.driver ==",)))],
        expect=Error("selector #0: CEL compile error"),
    ),
    # ---------------------------------------------------------------- allocation mode All
    Case(
        "all_mode_takes_every_matching_device",
        [
            claim(
                "c",
                exactly(
                    "gpu",
                    allocationMode="All",
                    selectors=('device.attributes["resource.kubernetes.io"].numaNode == 0',),
                ),
            )
        ],
        slices=NUMA_GPUS,
        expect=[["gpu=gpu-0", "gpu=gpu-2"]],
    ),
    Case(
        "all_mode_without_matching_device_is_none",
        [claim("c", exactly("gpu", allocationMode="All", cls="other"))],
        classes=[device_class("other", 'device.driver == "nic.example.com"')],
        expect=None,
    ),
    Case(
        "all_mode_with_a_device_in_use_is_none",
        [claim("c", exactly("gpu", allocationMode="All"))],
        allocated=[allocated("old", result("gpu-1"))],
        expect=None,
    ),
    Case(
        "all_mode_with_an_incomplete_pool_is_an_error",
        [claim("c", exactly("gpu", allocationMode="All"))],
        slices=[resource_slice("s", devices("gpu-0"), count=2)],
        expect=Error("is currently being updated"),
    ),
    Case(
        "all_mode_device_rejected_by_constraint_is_an_error",
        [
            claim(
                "c",
                exactly("gpu", allocationMode="All"),
                constraints=[{"matchAttribute": "resource.kubernetes.io/numaNode"}],
            )
        ],
        slices=NUMA_GPUS,
        expect=Error("a claim constraint would not be satisfied"),
    ),
    # ---------------------------------------------------------------- pools
    Case(
        "only_the_highest_pool_generation_counts",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("old", devices("gpu-old"), generation=1),
            resource_slice("new", devices("gpu-new"), generation=2),
        ],
        expect=[["gpu=gpu-new"]],
    ),
    Case(
        "incomplete_pool_is_not_allocated_from",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", devices("gpu-0"), count=2)],
        expect=None,
    ),
    Case(
        "pool_completeness_counts_slices_for_other_nodes",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("s-1", devices("gpu-a"), pool="shared", node="node-1", count=2),
            resource_slice("s-2", devices("gpu-b"), pool="shared", node="node-2", count=2),
        ],
        expect=[["gpu=gpu-a"]],
    ),
    Case(
        "pool_with_a_newer_generation_elsewhere_is_obsolete",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("s-1", devices("gpu-a"), pool="shared", node="node-1", count=2, generation=1),
            resource_slice("s-2", devices("gpu-b"), pool="shared", node="node-2", count=1, generation=2),
        ],
        expect=None,
    ),
    Case(
        "duplicate_device_names_make_a_pool_invalid",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("a-1", devices("gpu-0"), pool="a", count=2),
            resource_slice("a-2", devices("gpu-0"), pool="a", count=2),
            resource_slice("b-1", devices("gpu-9"), pool="b"),
        ],
        expect=[["gpu=gpu-9"]],
    ),
    Case(
        "unknown_counter_reference_makes_a_pool_invalid",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice(
                "s",
                [
                    device(
                        "gpu-0",
                        consumesCounters=[{"counterSet": "nope", "counters": {"memory": {"value": "1"}}}],
                    )
                ],
            )
        ],
        expect=None,
    ),
    Case(
        "pools_are_ordered_by_driver_then_pool_name",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("s-z", devices("in-pool-b"), pool="b"),
            resource_slice("s-y", devices("in-pool-a"), pool="a"),
        ],
        expect=[["gpu=in-pool-a"]],
    ),
    Case(
        "slices_are_ordered_by_name_within_a_pool",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("s-2", devices("second"), count=2),
            resource_slice("s-1", devices("first"), count=2),
        ],
        expect=[["gpu=first"]],
    ),
    Case(
        "pools_with_binding_conditions_come_last",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("a", [device("bound", bindingConditions=["Attached"])], pool="a"),
            resource_slice("b", devices("plain"), pool="b"),
        ],
        expect=[["gpu=plain"]],
    ),
    Case(
        "slices_of_other_nodes_are_ignored",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", devices("gpu-0"), node="node-2", pool="node-2")],
        expect=None,
    ),
    Case(
        "node_selector_slices_match_node_labels",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice(
                "s",
                devices("gpu-0"),
                pool="zone-a",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                },
            )
        ],
        expect=[
            {
                "devices": {"results": [result("gpu-0", request="gpu", pool="zone-a")]},
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                },
            }
        ],
    ),
    Case(
        "node_selector_that_does_not_match_hides_the_slice",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice(
                "s",
                devices("gpu-0"),
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}
                    ]
                },
            )
        ],
        expect=None,
    ),
    Case(
        "node_selector_match_fields_select_by_node_name",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", devices("gpu-0"), nodeSelector=node_name_selector("node-1"))],
        expect=[["gpu=gpu-0"]],
    ),
    Case(
        "node_selector_gt_compares_integers",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice(
                "s",
                devices("gpu-0"),
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "rack", "operator": "Gt", "values": ["10"]}]}
                    ]
                },
            )
        ],
        expect=None,
    ),
    Case(
        "all_nodes_devices_need_no_node_selector",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", devices("gpu-0"), pool="net", allNodes=True)],
        expect=[{"devices": {"results": [result("gpu-0", request="gpu", pool="net")]}}],
    ),
    Case(
        "per_device_node_selection_filters_devices",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice(
                "s",
                [device("elsewhere", nodeName="node-2"), device("here", nodeName="node-1")],
                pool="fabric",
                perDeviceNodeSelection=True,
            )
        ],
        expect=[
            {
                "devices": {"results": [result("here", request="gpu", pool="fabric")]},
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
    Case(
        "slices_without_node_selection_fields_are_ignored",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", devices("gpu-0"), node=None)],
        expect=None,
    ),
    Case(
        "without_a_node_only_all_nodes_slices_count",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("local", devices("gpu-0")),
            resource_slice("net", devices("gpu-net"), pool="net", allNodes=True),
        ],
        node=None,
        expect=[["gpu=gpu-net"]],
    ),
    Case(
        "node_selectors_of_all_devices_are_and_merged",
        [claim("c", exactly("gpu", count=2))],
        slices=[
            resource_slice(
                "a",
                devices("dev-a"),
                pool="a",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                },
            ),
            resource_slice(
                "b",
                devices("dev-b"),
                pool="b",
                nodeSelector={
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "Exists"}]}]
                },
            ),
        ],
        expect=[
            {
                "devices": {
                    "results": [
                        result("dev-a", request="gpu", pool="a"),
                        result("dev-b", request="gpu", pool="b"),
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": ["a"]},
                                {"key": "rack", "operator": "Exists"},
                            ]
                        }
                    ]
                },
            }
        ],
    ),
    # ---------------------------------------------------------------- constraints and search
    Case(
        "match_attribute_picks_devices_with_the_same_value",
        [
            claim(
                "c",
                exactly("gpu", count=2),
                constraints=[{"matchAttribute": "resource.kubernetes.io/numaNode"}],
            )
        ],
        slices=NUMA_GPUS,
        expect=[["gpu=gpu-0", "gpu=gpu-2"]],
    ),
    Case(
        "match_attribute_backtracks_across_requests",
        [
            claim(
                "c",
                exactly("a"),
                exactly("b", selectors=('device.attributes["resource.kubernetes.io"].numaNode == 1',)),
                constraints=[{"matchAttribute": "resource.kubernetes.io/numaNode"}],
            )
        ],
        slices=NUMA_GPUS,
        expect=[["a=gpu-1", "b=gpu-3"]],
    ),
    Case(
        "match_attribute_skips_devices_without_the_attribute",
        [claim("c", exactly("gpu"), constraints=[{"matchAttribute": "resource.kubernetes.io/numaNode"}])],
        slices=[
            resource_slice(
                "s", [device("bare"), device("numa", attrs={"resource.kubernetes.io/numaNode": 0})]
            )
        ],
        expect=[["gpu=numa"]],
    ),
    Case(
        "match_attribute_applies_only_to_named_requests",
        [
            claim(
                "c",
                exactly("a"),
                exactly("b"),
                exactly("free"),
                constraints=[{"requests": ["a", "b"], "matchAttribute": "resource.kubernetes.io/numaNode"}],
            )
        ],
        slices=NUMA_GPUS,
        expect=[["a=gpu-0", "b=gpu-2", "free=gpu-1"]],
    ),
    Case(
        "match_attribute_finds_bare_names_in_the_driver_domain",
        [claim("c", exactly("gpu", count=2), constraints=[{"matchAttribute": f"{DRIVER}/model"}])],
        slices=[
            resource_slice(
                "s",
                [
                    device("a-0", attrs={"model": "a100"}),
                    device("h-0", attrs={"model": "h200"}),
                    device("h-1", attrs={"model": "h200"}),
                ],
            )
        ],
        expect=[["gpu=h-0", "gpu=h-1"]],
    ),
    Case(
        "match_attribute_needs_the_same_type",
        [claim("c", exactly("gpu", count=2), constraints=[{"matchAttribute": f"{DRIVER}/slot"}])],
        slices=[
            resource_slice("s", [device("int-1", attrs={"slot": 1}), device("str-1", attrs={"slot": "1"})])
        ],
        expect=None,
    ),
    Case(
        "distinct_attribute_picks_different_values",
        [
            claim(
                "c",
                exactly("gpu", count=2),
                constraints=[{"distinctAttribute": "resource.kubernetes.io/numaNode"}],
            )
        ],
        slices=NUMA_GPUS,
        expect=[["gpu=gpu-0", "gpu=gpu-1"]],
    ),
    Case(
        "distinct_attribute_compares_every_device_of_a_request",
        [
            claim(
                "c",
                exactly("gpu", count=3),
                constraints=[{"distinctAttribute": "resource.kubernetes.io/numaNode"}],
            )
        ],
        slices=NUMA_GPUS,
        expect=None,
    ),
    Case(
        "distinct_attribute_needs_consumable_capacity",
        [claim("c", exactly("gpu"), constraints=[{"distinctAttribute": "resource.kubernetes.io/numaNode"}])],
        slices=NUMA_GPUS,
        features=NO_CC,
        expect=Error("distinctAttribute needs the ConsumableCapacity feature"),
    ),
    Case(
        "first_available_prefers_the_first_subrequest",
        [claim("c", first_available("gpu", sub("big", count=2), sub("small", count=1)))],
        expect=[["gpu/big=gpu-0", "gpu/big=gpu-1"]],
    ),
    Case(
        "first_available_falls_back_to_a_later_subrequest",
        [claim("c", first_available("gpu", sub("big", count=8), sub("small", count=1)))],
        expect=[["gpu/small=gpu-0"]],
    ),
    Case(
        "first_available_skips_subrequests_over_32_results",
        [claim("c", first_available("gpu", sub("huge", count=40), sub("one")))],
        expect=[["gpu/one=gpu-0"]],
    ),
    Case(
        "first_available_needs_prioritized_list",
        [claim("c", first_available("gpu", sub("one")))],
        features=DEFAULT_FEATURES - {"PrioritizedList"},
        expect=Error("PrioritizedList feature is disabled"),
    ),
    Case(
        "constraints_can_name_a_subrequest",
        [
            claim(
                "c",
                exactly("a"),
                first_available(
                    "b", sub("one", selectors=('device.attributes["resource.kubernetes.io"].numaNode == 1',))
                ),
                constraints=[
                    {"requests": ["a", "b/one"], "matchAttribute": "resource.kubernetes.io/numaNode"}
                ],
            )
        ],
        slices=NUMA_GPUS,
        expect=[["a=gpu-1", "b/one=gpu-3"]],
    ),
    Case(
        "search_backtracks_across_claims",
        [
            claim("a", exactly("gpu")),
            claim(
                "b",
                exactly(
                    "gpu", count=2, selectors=('device.attributes["resource.kubernetes.io"].numaNode == 0',)
                ),
            ),
        ],
        slices=NUMA_GPUS,
        expect=[["gpu=gpu-1"], ["gpu=gpu-0", "gpu=gpu-2"]],
    ),
    Case(
        "all_mode_over_32_devices_is_an_error",
        [claim("c", exactly("gpu", allocationMode="All"))],
        slices=[resource_slice("s", devices(*(f"gpu-{i}" for i in range(33))))],
        expect=Error("exceeds the claim limit of 32"),
    ),
    Case(
        "match_attribute_compares_versions",
        [claim("c", exactly("gpu", count=2), constraints=[{"matchAttribute": f"{DRIVER}/fw"}])],
        slices=[
            resource_slice(
                "s",
                [
                    device("old", attrs={"fw": {"version": "1.2.3"}}),
                    device("new-0", attrs={"fw": {"version": "2.0.0"}}),
                    device("new-1", attrs={"fw": {"version": "2.0.0"}}),
                ],
            )
        ],
        expect=[["gpu=new-0", "gpu=new-1"]],
    ),
    Case(
        "match_attribute_on_lists_needs_a_common_element",
        [claim("c", exactly("gpu", count=2), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])],
        slices=[
            resource_slice(
                "s",
                [
                    device("n0", attrs={"numa": {"ints": [0]}}),
                    device("n01", attrs={"numa": {"ints": [0, 1]}}),
                ],
            )
        ],
        features=DEFAULT_FEATURES | {"ListTypeAttributes"},
        expect=[["gpu=n0", "gpu=n01"]],
    ),
    Case(
        "list_attributes_do_not_exist_without_the_feature",
        [claim("c", exactly("gpu"), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])],
        slices=[resource_slice("s", [device("n01", attrs={"numa": {"ints": [0, 1]}})])],
        expect=None,
    ),
    Case(
        "claim_config_for_an_unchosen_subrequest_is_left_out",
        [
            claim(
                "c",
                first_available("gpu", sub("big", count=9), sub("small")),
                config=[
                    {"requests": ["gpu/big"], "opaque": {"driver": DRIVER, "parameters": {"for": "big"}}},
                    {"requests": ["gpu/small"], "opaque": {"driver": DRIVER, "parameters": {"for": "small"}}},
                ],
            )
        ],
        expect=[
            {
                "devices": {
                    "results": [result("gpu-0", request="gpu/small")],
                    "config": [
                        {"source": "FromClaim", "opaque": {"driver": DRIVER, "parameters": {"for": "small"}}}
                    ],
                },
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
    Case(
        "node_selector_term_without_requirements_matches_nothing",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", devices("gpu-0"), nodeSelector={"nodeSelectorTerms": [{}]})],
        expect=None,
    ),
    Case(
        "unknown_node_selector_operator_is_an_error",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice(
                "s",
                devices("gpu-0"),
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}
                    ]
                },
            )
        ],
        expect=Error('matchExpressions[0].operator: Unsupported value: "Near"'),
    ),
    Case(
        "constraints_backtrack_until_all_of_them_hold",
        [
            claim(
                "c",
                exactly("a"),
                exactly("b"),
                constraints=[
                    {"requests": ["a"], "matchAttribute": f"{DRIVER}/version"},
                    {"matchAttribute": f"{DRIVER}/flavor"},
                ],
            )
        ],
        slices=[
            resource_slice(
                "s",
                [
                    device("d1", attrs={"version": {"version": "1.0.0"}, "flavor": "a"}),
                    device("d2", attrs={"version": {"version": "2.0.0"}, "flavor": "b"}),
                    device("d3", attrs={"version": {"version": "3.0.0"}, "flavor": "b"}),
                ],
            )
        ],
        expect=[["a=d2", "b=d3"]],
    ),
    Case(
        "small_and_large_requests_backtrack_by_capacity",
        [
            claim(
                "c",
                exactly(
                    "small",
                    selectors=(f'device.capacity["{DRIVER}"].memory.compareTo(quantity("1Gi")) >= 0',),
                ),
                exactly(
                    "large",
                    selectors=(f'device.capacity["{DRIVER}"].memory.compareTo(quantity("2Gi")) >= 0',),
                ),
            )
        ],
        slices=[
            resource_slice(
                "s", [device("big", capacity={"memory": "2Gi"}), device("little", capacity={"memory": "1Gi"})]
            )
        ],
        expect=[["small=little", "large=big"]],
    ),
    Case(
        "admin_access_may_share_a_device_another_claim_is_getting",
        [claim("plain", exactly("gpu")), claim("admin", exactly("gpu", adminAccess=True))],
        expect=[["gpu=gpu-0"], ["gpu=gpu-0"]],
    ),
    Case(
        "admin_access_all_mode_cannot_reuse_a_device_of_its_own_claim",
        [
            claim(
                "c", exactly("one", adminAccess=True), exactly("all", adminAccess=True, allocationMode="All")
            )
        ],
        expect=None,
    ),
    Case(
        "counters_from_two_counter_sets_must_all_fit",
        [claim("c", exactly("a"), exactly("b"))],
        slices=[
            resource_slice(
                "counters",
                [],
                node=None,
                count=2,
                sharedCounters=[
                    {"name": "cs1", "counters": {"cpus": {"value": "8"}, "memory": {"value": "18Gi"}}},
                    {"name": "cs2", "counters": {"cpus": {"value": "12"}, "memory": {"value": "18Gi"}}},
                ],
            ),
            resource_slice(
                "parts",
                [
                    device(
                        name,
                        consumesCounters=[
                            {
                                "counterSet": "cs1",
                                "counters": {"memory": {"value": m1}, "cpus": {"value": c1}},
                            },
                            {
                                "counterSet": "cs2",
                                "counters": {"cpus": {"value": c2}, "memory": {"value": m2}},
                            },
                        ],
                    )
                    for name, m1, c1, c2, m2 in (
                        ("d1", "4Gi", "6", "4", "2Gi"),
                        ("d2", "6Gi", "4", "6", "6Gi"),
                        ("d3", "4Gi", "4", "4", "4Gi"),
                    )
                ],
                count=2,
            ),
        ],
        expect=[["a=d2", "b=d3"]],
    ),
    Case(
        "counters_already_overdrawn_block_the_whole_pool",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice(
                "counters",
                [],
                node=None,
                count=2,
                sharedCounters=[{"name": "cs", "counters": {"memory": {"value": "18Gi"}}}],
            ),
            resource_slice(
                "parts",
                [
                    device(
                        "small",
                        consumesCounters=[{"counterSet": "cs", "counters": {"memory": {"value": "4Gi"}}}],
                    ),
                    device(
                        "huge",
                        consumesCounters=[{"counterSet": "cs", "counters": {"memory": {"value": "20Gi"}}}],
                    ),
                ],
                count=2,
            ),
        ],
        allocated=[allocated("old", result("huge"))],
        expect=None,
    ),
    Case(
        "node_selector_is_the_union_of_network_attached_devices",
        [claim("c", exactly("gpu", count=3))],
        slices=[
            resource_slice(
                "r",
                devices("in-region"),
                pool="region",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                },
            ),
            resource_slice("everywhere", devices("anywhere"), pool="shared", allNodes=True),
            resource_slice(
                "named", devices("by-name"), pool="z-named", nodeSelector=node_name_selector("node-1")
            ),
        ],
        expect=[
            {
                "devices": {
                    "results": [
                        result("in-region", request="gpu", pool="region"),
                        result("anywhere", request="gpu", pool="shared"),
                        result("by-name", request="gpu", pool="z-named"),
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}],
                        }
                    ]
                },
            }
        ],
    ),
    # ---------------------------------------------------------------- admin access
    Case(
        "admin_access_ignores_devices_in_use",
        [claim("c", exactly("gpu", adminAccess=True))],
        allocated=[allocated("old", result("gpu-0"))],
        expect=[
            {
                "devices": {"results": [result("gpu-0", request="gpu", adminAccess=True)]},
                "nodeSelector": node_name_selector(),
            }
        ],
    ),
    Case(
        "admin_access_allocations_do_not_block_others",
        [claim("c", exactly("gpu"))],
        allocated=[allocated("admin", result("gpu-0", adminAccess=True))],
        expect=[["gpu=gpu-0"]],
    ),
    Case(
        "admin_access_needs_the_feature",
        [claim("c", exactly("gpu", adminAccess=True))],
        features=DEFAULT_FEATURES - {"AdminAccess"},
        expect=Error("AdminAccess feature is disabled"),
    ),
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
        "counters_of_a_rejected_device_are_given_back",
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
        expect=[["gpu=healthy-full"]],
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


def _compact(allocation: dict[str, Any]) -> list[str]:
    return [f"{r['request']}={r['device']}" for r in allocation["devices"]["results"]]


def _ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"00000000-0000-4000-8000-{next(counter):012d}"


def test_it_has_a_case_for_every_documented_behaviour() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 50


def _selector_backend(name: str) -> SelectorBackend:
    return SelectorBackend(engine=backend(name), device_input=device_input_from_api, errors=(CelError,))


# Every case on both CEL backends: the allocator sees them only through SelectorBackend.
@pytest.mark.parametrize("cel_backend", BACKEND_NAMES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_it_allocates_as_documented(case: Case, cel_backend: str) -> None:
    def run() -> list[dict[str, Any]] | None:
        return allocate(
            backend=_selector_backend(cel_backend),
            classes=case.classes,
            slices=case.slices,
            allocated_claims=case.allocated,
            claims=case.claims,
            node=case.node,
            taint_rules=case.rules,
            features=case.features,
            id_factory=_ids(),
            clock=lambda: NOW,
        )

    if isinstance(case.expect, Error):
        with pytest.raises(AllocationError, match=None) as info:
            run()
        assert case.expect.substring in str(info.value)
        return
    got = run()
    if case.expect is None or got is None:
        assert got == case.expect
    elif case.expect and isinstance(case.expect[0], list):
        assert [_compact(a) for a in got] == case.expect
    else:
        assert got == case.expect
