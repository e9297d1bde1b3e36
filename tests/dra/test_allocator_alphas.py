"""The 1.37 betas and alphas that change allocation, each behind its upstream gate.

Cases are ours, several ported in our own words from upstream's tests for these features: the
derived-attributes integration test (two drivers naming NUMA differently), the compatibility-groups
examples of KEP-5963 and its e2e (MIG then vGPU on one GPU), and the fractional-range unit cases of
the incubating allocator's consumable-capacity tests.
"""

from __future__ import annotations

from typing import Any

import pytest

from dra.allocator import DEFAULT_FEATURES, AllocationError, allocate
from dra.allocator.capacity import consumed_amount, violates_policy
from dra.allocator.features import normalize_features
from dra.allocator.model import Capacity, CapacityPolicy
from dra.quantity import Quantity
from tests.dra.allocator_cases import (
    DRIVER,
    GPU_CLASS,
    NODE,
    Case,
    Error,
    J,
    allocated,
    check_case,
    claim,
    device,
    device_class,
    exactly,
    first_available,
    resource_slice,
    result,
    shared_nic,
    sub,
)

NIC = "nic.example.com"
NIC_CLASS = device_class("nic", f'device.driver == "{NIC}"')
DERIVED = DEFAULT_FEATURES | {"DerivedAttributes"}
GROUPS = DEFAULT_FEATURES | {"DeviceCompatibilityGroups"}
NODE_OPS = DEFAULT_FEATURES | {"OptionalNodeOperations"}


def derived(name: str, expression: str) -> list[J]:
    return [{"name": name, "expression": expression}]


def numa_world() -> list[J]:
    """GPUs publish ``numa``, NICs ``numaNode`` (upstream's derived-attributes integration test)."""
    return [
        resource_slice(
            "node-1-gpus",
            [device("gpu-0", attrs={"numa": "numa-0"}), device("gpu-1", attrs={"numa": "numa-1"})],
        ),
        resource_slice(
            "node-1-nics",
            [device("nic-0", attrs={"numaNode": "numa-1"}), device("nic-1", attrs={"numaNode": "numa-2"})],
            driver=NIC,
            pool="node-1-nics",
        ),
    ]


GPU_NUMA = f'device.attributes["{DRIVER}"].numa'
NIC_NUMA = f'device.attributes["{NIC}"].numaNode'
SAME_NUMA = [{"requests": ["gpu", "nic"], "matchAttribute": "derived/numa"}]


def gpu_and_nic(gpu_expr: str = GPU_NUMA, nic_expr: str = NIC_NUMA, **gpu: Any) -> J:
    return claim(
        "c",
        exactly("gpu", derivedAttributes=derived("derived/numa", gpu_expr), **gpu),
        exactly("nic", cls="nic", derivedAttributes=derived("derived/numa", nic_expr)),
        constraints=SAME_NUMA,
    )


def mig_gpu(
    *parts: tuple[str, list[str]], memory: str = "8Gi", each: str = "4Gi", pool: str = "node-1"
) -> list[J]:
    """One GPU's memory as a counter set, offered as partitions with compatibility groups."""
    counters = [{"name": "gpu-0-memory", "counters": {"memory": {"value": memory}}}]

    def part(name: str, groups: list[str]) -> J:
        consumption: J = {"counterSet": "gpu-0-memory", "counters": {"memory": {"value": each}}}
        if groups:
            consumption["compatibilityGroups"] = groups
        return device(name, consumesCounters=[consumption])

    return [
        resource_slice(f"{pool}-counters", [], pool=pool, count=2, sharedCounters=counters),
        resource_slice(f"{pool}-parts", [part(n, g) for n, g in parts], pool=pool, count=2),
    ]


MIG_VGPU_MIG = mig_gpu(("mig-0", ["mig"]), ("vgpu-0", ["vgpu"]), ("mig-1", ["mig"]))

CASES = [
    # ---------------------------------------------------------------- derived attributes
    Case(
        "derived_attribute_aligns_devices_of_two_drivers",
        [gpu_and_nic()],
        slices=numa_world(),
        classes=[GPU_CLASS, NIC_CLASS],
        features=DERIVED,
        expect=[["gpu=gpu-1", "nic=nic-0"]],
    ),
    Case(
        "without_derived_attributes_the_constraint_finds_no_attribute",
        [
            claim(
                "c",
                exactly("gpu"),
                exactly("nic", cls="nic"),
                constraints=SAME_NUMA,
            )
        ],
        slices=numa_world(),
        classes=[GPU_CLASS, NIC_CLASS],
        features=DERIVED,
        expect=None,
    ),
    Case(
        "derived_attribute_extracts_part_of_a_topology_string",
        [
            gpu_and_nic(
                gpu_expr=f"device.attributes[\"{DRIVER}\"].topology.split('-')[0]",
                nic_expr=f'device.attributes["{NIC}"].numaNode',
            )
        ],
        slices=[
            resource_slice(
                "node-1-gpus",
                [
                    device("gpu-0", attrs={"topology": "numa0-pcie3"}),
                    device("gpu-1", attrs={"topology": "numa1-pcie7"}),
                ],
            ),
            resource_slice(
                "node-1-nics", [device("nic-0", attrs={"numaNode": "numa1"})], driver=NIC, pool="node-1-nics"
            ),
        ],
        classes=[GPU_CLASS, NIC_CLASS],
        features=DERIVED,
        expect=[["gpu=gpu-1", "nic=nic-0"]],
    ),
    Case(
        "derived_attribute_shadows_the_real_attribute_in_constraints",
        # Both GPUs publish numa 0, but the request derives "its numa" from the PCI root instead.
        [
            claim(
                "c",
                exactly(
                    "gpu",
                    count=2,
                    derivedAttributes=derived(f"{DRIVER}/numa", f'device.attributes["{DRIVER}"].pcieRoot'),
                ),
                constraints=[{"matchAttribute": f"{DRIVER}/numa"}],
            )
        ],
        slices=[
            resource_slice(
                "s",
                [
                    device("gpu-0", attrs={"numa": 0, "pcieRoot": "pci0"}),
                    device("gpu-1", attrs={"numa": 0, "pcieRoot": "pci1"}),
                    device("gpu-2", attrs={"numa": 1, "pcieRoot": "pci1"}),
                ],
            )
        ],
        features=DERIVED,
        expect=[["gpu=gpu-1", "gpu=gpu-2"]],
    ),
    Case(
        "derived_attribute_feeds_distinct_attribute",
        [
            claim(
                "c",
                exactly(
                    "gpu",
                    count=2,
                    derivedAttributes=derived("derived/socket", f'device.attributes["{DRIVER}"].numa / 2'),
                ),
                constraints=[{"distinctAttribute": "derived/socket"}],
            )
        ],
        slices=[resource_slice("s", [device(f"gpu-{i}", attrs={"numa": i}) for i in range(4)])],
        features=DERIVED,
        expect=[["gpu=gpu-0", "gpu=gpu-2"]],
    ),
    Case(
        "derived_attribute_is_not_visible_to_selectors",
        [
            claim(
                "c",
                exactly(
                    "gpu",
                    selectors=('has(device.attributes["derived"].numa)',),
                    derivedAttributes=derived("derived/numa", "0"),
                ),
                constraints=[{"matchAttribute": "derived/numa"}],
            )
        ],
        slices=[resource_slice("s", [device("gpu-0", attrs={"numa": 0})])],
        features=DERIVED,
        expect=None,
    ),
    Case(
        "derived_attribute_is_evaluated_only_on_devices_the_selectors_matched",
        # gpu-0 has no numa attribute: evaluating the expression there would be an error.
        [
            claim(
                "c",
                exactly(
                    "gpu",
                    selectors=(f'has(device.attributes["{DRIVER}"].numa)',),
                    derivedAttributes=derived("derived/numa", GPU_NUMA),
                ),
                constraints=[{"matchAttribute": "derived/numa"}],
            )
        ],
        slices=[resource_slice("s", [device("gpu-0"), device("gpu-1", attrs={"numa": 1})])],
        features=DERIVED,
        expect=[["gpu=gpu-1"]],
    ),
    Case(
        "derived_attribute_runtime_error_aborts_allocation",
        [gpu_and_nic(gpu_expr=f'device.attributes["{DRIVER}"].missing')],
        slices=numa_world(),
        classes=[GPU_CLASS, NIC_CLASS],
        features=DERIVED,
        expect=Error(
            "claim default/c, request gpu: derived attribute derived/numa on device gpu.example.com/node-1/gpu-0:"
            " CEL runtime error"
        ),
    ),
    Case(
        "derived_attribute_of_no_attribute_type_aborts_allocation",
        [gpu_and_nic(gpu_expr="1.5")],
        slices=numa_world(),
        classes=[GPU_CLASS, NIC_CLASS],
        features=DERIVED,
        expect=Error("result of type float is not a string, int, bool or semver"),
    ),
    Case(
        "derived_attribute_compile_error_names_it",
        [gpu_and_nic(gpu_expr="device.driver ==")],
        slices=numa_world(),
        classes=[GPU_CLASS, NIC_CLASS],
        features=DERIVED,
        expect=Error("derived attribute derived/numa: CEL compile error"),
    ),
    Case(
        "derived_list_needs_list_type_attributes",
        [gpu_and_nic(gpu_expr=f"[{GPU_NUMA}, 'numa-9']")],
        slices=numa_world(),
        classes=[GPU_CLASS, NIC_CLASS],
        features=DERIVED,
        expect=Error("a list result needs the DRAListTypeAttributes feature"),
    ),
    Case(
        "derived_list_matches_by_intersection_with_list_type_attributes",
        # gpu-0 derives ["numa-0", "numa-2"], which meets nic-1's "numa-2".
        [gpu_and_nic(gpu_expr=f"[{GPU_NUMA}, 'numa-2']", selectors=(f'{GPU_NUMA} == "numa-0"',))],
        slices=numa_world(),
        classes=[GPU_CLASS, NIC_CLASS],
        features=DERIVED | {"ListTypeAttributes"},
        expect=[["gpu=gpu-0", "nic=nic-1"]],
    ),
    Case(
        "each_subrequest_evaluates_its_own_derived_attributes",
        # The preferred subrequest derives a value no NIC has; the fallback's expression fits nic-1.
        [
            claim(
                "c",
                first_available(
                    "gpu",
                    sub("same-numa", derivedAttributes=derived("derived/numa", GPU_NUMA)),
                    sub("any", derivedAttributes=derived("derived/numa", "'numa-2'")),
                ),
                exactly("nic", cls="nic", derivedAttributes=derived("derived/numa", NIC_NUMA)),
                constraints=[{"requests": ["gpu", "nic"], "matchAttribute": "derived/numa"}],
            )
        ],
        slices=[
            resource_slice("node-1-gpus", [device("gpu-0", attrs={"numa": "numa-0"})]),
            resource_slice(
                "node-1-nics", [device("nic-1", attrs={"numaNode": "numa-2"})], driver=NIC, pool="node-1-nics"
            ),
        ],
        classes=[GPU_CLASS, NIC_CLASS],
        features=DERIVED,
        expect=[["gpu/any=gpu-0", "nic=nic-1"]],
    ),
    Case(
        "derived_attributes_in_a_subrequest_need_their_feature",
        [claim("c", first_available("gpu", sub("one", derivedAttributes=derived("derived/numa", "0"))))],
        expect=Error(
            "claim default/c, subrequest one: has derived attributes, but the DRADerivedAttributes feature is disabled"
        ),
    ),
    # ---------------------------------------------------------------- compatibility groups
    Case(
        "mig_and_vgpu_partitions_of_one_gpu_are_not_combined",
        # Counters alone would allow any two 4Gi partitions of the 8Gi GPU.
        [claim("c", exactly("gpu", count=2))],
        slices=mig_gpu(("mig-0", ["mig"]), ("vgpu-0", ["vgpu"])),
        features=GROUPS,
        expect=None,
    ),
    Case(
        "an_incompatible_partition_is_skipped_and_its_counters_given_back",
        [claim("c", exactly("gpu", count=2))],
        slices=MIG_VGPU_MIG,
        features=GROUPS,
        expect=[["gpu=mig-0", "gpu=mig-1"]],
    ),
    Case(
        "an_allocated_mig_partition_keeps_vgpu_off_the_gpu",
        [claim("c", exactly("gpu", selectors=(f'device.attributes["{DRIVER}"].mode == "vgpu"',)))],
        slices=[
            s
            if "devices" not in s["spec"]
            else {
                **s,
                "spec": {
                    **s["spec"],
                    "devices": [
                        {**d, "attributes": {"mode": {"string": d["name"].split("-")[0]}}}
                        for d in s["spec"]["devices"]
                    ],
                },
            }
            for s in MIG_VGPU_MIG
        ],
        allocated=[allocated("mig-user", result("mig-0"))],
        features=GROUPS,
        expect=None,
    ),
    Case(
        "an_allocated_mig_partition_admits_another_mig_partition",
        [claim("c", exactly("gpu"))],
        slices=MIG_VGPU_MIG,
        allocated=[allocated("mig-user", result("mig-0"))],
        features=GROUPS,
        expect=[["gpu=mig-1"]],
    ),
    Case(
        "a_partition_without_groups_goes_only_with_other_groupless_partitions",
        [claim("c", exactly("gpu"))],
        slices=mig_gpu(("full-0", []), ("mig-0", ["mig"]), ("plain-1", []), memory="12Gi"),
        allocated=[allocated("plain-user", result("full-0"))],
        features=GROUPS,
        expect=[["gpu=plain-1"]],
    ),
    Case(
        "the_group_intersection_narrows_with_each_partition",
        # a {x,y} + b {y,z} share y; c {x} then fits neither; d {y} does.
        [claim("c", exactly("gpu", count=3))],
        slices=mig_gpu(("a", ["x", "y"]), ("b", ["y", "z"]), ("c", ["x"]), ("d", ["y"]), memory="16Gi"),
        features=GROUPS,
        expect=[["gpu=a", "gpu=b", "gpu=d"]],
    ),
    Case(
        "groups_are_checked_across_the_claims_of_one_attempt",
        [
            claim("c1", exactly("gpu", selectors=('device.attributes["gpu.example.com"].mode == "mig"',))),
            claim("c2", exactly("gpu", selectors=('device.attributes["gpu.example.com"].mode == "vgpu"',))),
        ],
        slices=[
            resource_slice(
                "counters", [], count=2, sharedCounters=[{"name": "g", "counters": {"m": {"value": "2"}}}]
            ),
            resource_slice(
                "parts",
                [
                    device(
                        name,
                        attrs={"mode": mode},
                        consumesCounters=[
                            {
                                "counterSet": "g",
                                "counters": {"m": {"value": "1"}},
                                "compatibilityGroups": [mode],
                            }
                        ],
                    )
                    for name, mode in (("mig-0", "mig"), ("vgpu-0", "vgpu"))
                ],
                count=2,
            ),
        ],
        features=GROUPS,
        expect=None,
    ),
    Case(
        "devices_on_different_counter_sets_are_never_compared",
        [claim("c", exactly("gpu", count=2))],
        slices=[
            resource_slice(
                "counters",
                [],
                count=2,
                sharedCounters=[
                    {"name": "gpu-0", "counters": {"m": {"value": "1"}}},
                    {"name": "gpu-1", "counters": {"m": {"value": "1"}}},
                ],
            ),
            resource_slice(
                "parts",
                [
                    device(
                        f"{mode}-on-{cs}",
                        consumesCounters=[
                            {
                                "counterSet": cs,
                                "counters": {"m": {"value": "1"}},
                                "compatibilityGroups": [mode],
                            }
                        ],
                    )
                    for mode, cs in (("mig", "gpu-0"), ("vgpu", "gpu-1"))
                ],
                count=2,
            ),
        ],
        features=GROUPS,
        expect=[["gpu=mig-on-gpu-0", "gpu=vgpu-on-gpu-1"]],
    ),
    Case(
        "without_the_feature_a_slice_declaring_groups_leaves_its_pool_incomplete",
        # The whole slice is ignored, so the group-less plain-1 beside mig-0 is not allocated either.
        [claim("c", exactly("gpu"))],
        slices=mig_gpu(("mig-0", ["mig"]), ("plain-1", [])),
        features=DEFAULT_FEATURES,
        expect=None,
    ),
    Case(
        "without_the_feature_all_mode_reports_the_pool_as_being_updated",
        [claim("c", exactly("gpu", allocationMode="All"))],
        slices=mig_gpu(("mig-0", ["mig"])),
        features=DEFAULT_FEATURES,
        expect=Error("is currently being updated"),
    ),
    Case(
        "without_the_feature_pools_without_groups_are_unaffected",
        [claim("c", exactly("gpu", count=2))],
        slices=mig_gpu(("part-0", []), ("part-1", [])),
        features=DEFAULT_FEATURES,
        expect=[["gpu=part-0", "gpu=part-1"]],
    ),
    # ---------------------------------------------------------------- optional node operations
    Case(
        "skip_node_operations_is_copied_into_each_result",
        [claim("c", exactly("gpu"))],
        slices=[resource_slice("s", [device("gpu-0")], skipNodeOperations=["*"])],
        features=NODE_OPS,
        expect=[
            {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": DRIVER,
                            "pool": "node-1",
                            "device": "gpu-0",
                            "skipNodeOperations": ["*"],
                        }
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                    ]
                },
            }
        ],
    ),
    Case(
        "without_the_feature_devices_skipping_node_operations_are_not_allocated",
        [claim("c", exactly("gpu"))],
        slices=[
            resource_slice("a", [device("gpu-0")], skipNodeOperations=["NodeUnprepareResources"]),
            resource_slice("b", [device("gpu-1")], pool="node-1-b"),
        ],
        features=DEFAULT_FEATURES,
        expect=[["gpu=gpu-1"]],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_it_allocates_as_documented(case: Case) -> None:
    check_case(case)


# ---------------------------------------------------------------- fractional capacity ranges


def _fractional_nic(policy: J, value: str = "1") -> list[J]:
    return shared_nic({"bw": {"value": value, "requestPolicy": policy}})


def _consumed(slices: list[J], request: str, features: frozenset[str], count: int = 1) -> list[str] | None:
    claims = [claim(f"c{i}", exactly("nic", capacity={"requests": {"bw": request}})) for i in range(count)]
    got = allocate(
        classes=[GPU_CLASS], slices=slices, allocated_claims=[], claims=claims, node=NODE, features=features
    )
    if got is None:
        return None
    return [a["devices"]["results"][0]["consumedCapacity"]["bw"] for a in got]


POINT_TWO_RANGE = {"default": "200m", "validRange": {"min": "200m", "max": "1", "step": "100m"}}


def test_it_rounds_a_request_onto_a_fractional_step_in_milli_units() -> None:
    # Upstream's unit case: min 0.2, step 0.1, max 1; 0.25 is rounded up to 0.3.
    assert _consumed(_fractional_nic(POINT_TWO_RANGE), "250m", DEFAULT_FEATURES) == ["300m"]
    assert _consumed(_fractional_nic(POINT_TWO_RANGE), "400m", DEFAULT_FEATURES) == ["400m"]


def test_it_fits_three_fractional_shares_where_whole_units_fit_one() -> None:
    three = _consumed(_fractional_nic(POINT_TWO_RANGE), "250m", DEFAULT_FEATURES, count=3)
    assert three == ["300m", "300m", "300m"]
    without = DEFAULT_FEATURES - {"FractionalCapacityRange"}
    # Without the feature upstream rounds on whole units: 0.25 takes the whole 1.
    assert _consumed(_fractional_nic(POINT_TWO_RANGE), "250m", without) == ["1"]
    assert _consumed(_fractional_nic(POINT_TWO_RANGE), "250m", without, count=2) is None


def test_it_rounds_fractional_ranges_on_whole_units_without_the_feature() -> None:
    policy = {"default": "500m", "validRange": {"min": "500m", "step": "500m"}}
    assert _consumed(_fractional_nic(policy, "4"), "1200m", DEFAULT_FEATURES) == ["1500m"]
    assert _consumed(
        _fractional_nic(policy, "4"), "1200m", DEFAULT_FEATURES - {"FractionalCapacityRange"}
    ) == ["2"]


def _range(min_: str, step: str | None, max_: str | None = None) -> CapacityPolicy:
    return CapacityPolicy(
        default=Quantity.parse(min_),
        valid_values=None,
        range_min=Quantity.parse(min_),
        range_max=Quantity.parse(max_) if max_ else None,
        range_step=Quantity.parse(step) if step else None,
    )


def test_it_finds_a_fractional_amount_off_the_step_in_violation() -> None:
    policy = _range("200m", "100m", "1")
    assert violates_policy(Quantity.parse("250m"), policy, fractional=True)
    assert not violates_policy(Quantity.parse("300m"), policy, fractional=True)
    assert violates_policy(Quantity.parse("1100m"), policy, fractional=True)


def test_it_uses_whole_units_for_integer_ranges_even_with_the_feature() -> None:
    cap = Capacity(value=Quantity.parse("10"), policy=_range("1", "2"))
    assert str(consumed_amount(Quantity.parse("1500m"), cap, fractional=True)) == "3"


def test_it_rounds_beyond_int64_exactly() -> None:
    # Upstream's overflow regression cases: the rounded amount never wraps negative.
    for step, request, want in (("5E", "6E", "10E"), ("100E", "150E", "200E")):
        cap = Capacity(value=Quantity.parse("1000E"), policy=_range("0", step))
        assert consumed_amount(Quantity.parse(request), cap) == Quantity.parse(want)


# ---------------------------------------------------------------- gates


def test_it_accepts_every_gate_name_with_the_dra_prefix() -> None:
    names = {
        "DRAFractionalCapacityRange",
        "DRADerivedAttributes",
        "DRADeviceCompatibilityGroups",
        "DRAOptionalNodeOperations",
        "DRANodeAllocatableResources",
        "DRAWorkloadResourceClaims",
        "DRAListTypeAttributes",
    }
    assert normalize_features(names) == {n[3:] for n in names}


def test_it_allocates_the_same_with_workload_resource_claims() -> None:
    # PodGroup claims change who a claim is reserved for, not what the allocator chooses.
    def run(features: frozenset[str]) -> Any:
        return allocate(
            classes=[GPU_CLASS],
            slices=[resource_slice("s", [device("gpu-0"), device("gpu-1")])],
            allocated_claims=[allocated("other", result("gpu-0"))],
            claims=[claim("c", exactly("gpu"))],
            node=NODE,
            features=features,
        )

    assert run(DEFAULT_FEATURES | {"WorkloadResourceClaims"}) == run(DEFAULT_FEATURES)


def test_it_reports_derived_attribute_errors_as_allocation_errors() -> None:
    with pytest.raises(AllocationError, match="derived attribute derived/numa"):
        allocate(
            classes=[GPU_CLASS],
            slices=[resource_slice("s", [device("gpu-0")])],
            allocated_claims=[],
            claims=[
                claim(
                    "c",
                    exactly("gpu", derivedAttributes=derived("derived/numa", GPU_NUMA)),
                    constraints=[{"matchAttribute": "derived/numa"}],
                )
            ],
            node=NODE,
            features=DERIVED,
        )
