"""The allocator's documented behaviour, one named case per rule (upstream-style table): the basics,
allocationMode All, pools, constraints and the search, admin access. Taints, partitionable devices,
consumable capacity, binding conditions and configuration are in ``test_allocator_resources.py``."""

from __future__ import annotations

import pytest

from dra.allocator import DEFAULT_FEATURES, SelectorBackend
from dra.allocator.cel import BACKEND_NAMES, CelError, backend, device_input_from_api
from tests.dra.allocator_cases import (
    DRIVER,
    NO_CC,
    NUMA_GPUS,
    STABLE,
    Case,
    Error,
    allocated,
    check_case,
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
)
from tests.dra.test_allocator_resources import RESOURCE_CASES

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
        expect=Error("could not retrieve device class nope"),
    ),
    Case(
        "unknown_allocation_mode_is_an_error",
        [claim("c", exactly("gpu", allocationMode="Some"))],
        expect=Error("unsupported count mode Some"),
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
        expect=Error(
            "invalid resource pools were encountered (gpu.example.com/node-1: counter set nope not found)"
        ),
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
        # Upstream holds one value per request name: the third device (numa 0) is compared with
        # the second (numa 1) only.
        "distinct_attribute_compares_with_the_latest_device_of_each_request",
        [
            claim(
                "c",
                exactly("gpu", count=3),
                constraints=[{"distinctAttribute": "resource.kubernetes.io/numaNode"}],
            )
        ],
        slices=NUMA_GPUS,
        expect=[["gpu=gpu-0", "gpu=gpu-1", "gpu=gpu-2"]],
    ),
    Case(
        "distinct_attribute_compares_across_requests_with_their_latest_devices",
        [
            claim(
                "c",
                exactly("gpu", count=2),
                exactly("more"),
                constraints=[{"distinctAttribute": "resource.kubernetes.io/numaNode"}],
            )
        ],
        slices=NUMA_GPUS,
        expect=[["gpu=gpu-0", "gpu=gpu-1", "more=gpu-2"]],
    ),
    Case(
        # Upstream's newer allocators serve any feature set beyond its stable one's.
        "distinct_attribute_works_without_consumable_capacity_when_binding_is_on",
        [
            claim(
                "c",
                exactly("gpu", count=2),
                constraints=[{"distinctAttribute": "resource.kubernetes.io/numaNode"}],
            )
        ],
        slices=NUMA_GPUS,
        features=NO_CC,
        expect=[["gpu=gpu-0", "gpu=gpu-1"]],
    ),
    Case(
        "distinct_attribute_is_unknown_to_the_stable_allocator",
        [claim("c", exactly("gpu"), constraints=[{"distinctAttribute": "resource.kubernetes.io/numaNode"}])],
        slices=NUMA_GPUS,
        features=STABLE,
        expect=Error("claim default/c, constraint #0: empty constraint (unsupported constraint type?)"),
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
        # The first device is always taken; only comparing needs scalars without the feature.
        "without_the_feature_a_list_value_is_accepted_only_as_the_first_device",
        [claim("c", exactly("gpu"), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])],
        slices=[resource_slice("s", [device("n01", attrs={"numa": {"ints": [0, 1]}})])],
        expect=[["gpu=n01"]],
    ),
    Case(
        "without_the_feature_list_values_never_match",
        [claim("c", exactly("gpu", count=2), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])],
        slices=[
            resource_slice(
                "s",
                [
                    device("n01", attrs={"numa": {"ints": [0, 1]}}),
                    device("n0", attrs={"numa": {"ints": [0]}}),
                ],
            )
        ],
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
        expect=Error("admin access is requested, but the feature is disabled"),
    ),
]


def test_it_has_a_case_for_every_documented_behaviour() -> None:
    names = [c.name for c in [*CASES, *RESOURCE_CASES]]
    assert len(names) == len(set(names))
    assert len(names) >= 50


def _selector_backend(name: str) -> SelectorBackend:
    return SelectorBackend(engine=backend(name), device_input=device_input_from_api, errors=(CelError,))


# Every case on both CEL backends: the allocator sees them only through SelectorBackend.
@pytest.mark.parametrize("cel_backend", BACKEND_NAMES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_it_allocates_as_documented(case: Case, cel_backend: str) -> None:
    check_case(case, backend=_selector_backend(cel_backend))
