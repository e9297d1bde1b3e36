"""`dra.availability`: free devices and headroom per DeviceClass of one pool, as the allocator answers."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dra.allocator import DEFAULT_FEATURES, AllocatedState, Allocator, explain, prepare_claim
from dra.availability import (
    COUNTERS,
    IN_USE,
    NO_CLASS,
    NO_NODE,
    POOL_INCOMPLETE,
    POOL_INVALID,
    TAINT,
    Blocked,
    PoolAvailability,
    bare_node,
    node_local_names,
    one_device_claim,
    pool_availability,
)
from tests.dra.allocator_cases import (
    DRIVER,
    GPU_CLASS,
    NODE,
    NODE_2,
    allocated,
    device,
    device_class,
    resource_slice,
    result,
    taint_rule,
)

J = dict[str, Any]
MIG_CLASS = device_class("mig", 'device.attributes["gpu.example.com"].type == "mig"')
WHOLE_CLASS = device_class("whole", 'device.attributes["gpu.example.com"].type == "gpu"')


def availability(
    slices: list[J],
    *,
    claims: list[J] | None = None,
    rules: list[J] | None = None,
    classes: list[J] | None = None,
    nodes: list[J] | None = None,
    pool: str = "node-1",
) -> PoolAvailability:
    return pool_availability(
        driver=DRIVER,
        pool=pool,
        slices=slices,
        allocated_claims=claims or [],
        taint_rules=rules or [],
        classes=classes if classes is not None else [GPU_CLASS],
        nodes=nodes if nodes is not None else [NODE],
    )


def numbers(a: PoolAvailability, cls: str = "gpu") -> tuple[int, int]:
    return a.classes[cls].free, a.classes[cls].headroom


def test_it_counts_unallocated_whole_devices_as_free_and_fitting() -> None:
    a = availability(
        [resource_slice("s", [device("gpu-0"), device("gpu-1"), device("gpu-2")])],
        claims=[allocated("train", result("gpu-1"))],
    )
    assert numbers(a) == (2, 2)
    assert a.devices["gpu-0"] is None
    assert a.devices["gpu-1"] == Blocked(IN_USE, "allocated to default/train")


def test_it_blocks_untolerated_taints_from_the_slice_and_from_rules_but_not_effect_none() -> None:
    ecc = {"key": "gpu.example.com/ecc", "value": "uncorrectable", "effect": "NoSchedule"}
    a = availability(
        [resource_slice("s", [device("gpu-0", taints=[ecc]), device("gpu-1"), device("gpu-2")])],
        rules=[
            taint_rule(
                "drain",
                {"key": "example.com/maint", "value": "x", "effect": "NoExecute"},
                {"device": "gpu-1"},
            ),
            taint_rule(
                "audit", {"key": "example.com/audit", "value": "y", "effect": "None"}, {"device": "gpu-2"}
            ),
        ],
    )
    assert numbers(a) == (1, 1)
    assert a.devices["gpu-0"] == Blocked(
        TAINT, "untolerated taint gpu.example.com/ecc=uncorrectable:NoSchedule from ResourceSlice"
    )
    assert a.devices["gpu-1"] == Blocked(
        TAINT, "untolerated taint example.com/maint=x:NoExecute from DeviceTaintRule drain"
    )
    assert a.devices["gpu-2"] is None


def mig_pool(*, partitions_per_gpu: int = 2) -> list[J]:
    """Two 4-slice GPUs: each a whole device (all 4 slices) and 1-slice and 2-slice partitions."""
    counters: list[J] = []
    devs: list[J] = []
    for g in range(2):
        counters.append({"name": f"gpu-{g}-counters", "counters": {"slices": {"value": "4"}}})
        devs.append(
            device(
                f"gpu-{g}",
                attrs={"type": "gpu"},
                consumesCounters=[
                    {"counterSet": f"gpu-{g}-counters", "counters": {"slices": {"value": "4"}}}
                ],
            )
        )
        for size, count in ((1, 4), (2, partitions_per_gpu)):
            devs += [
                device(
                    f"gpu-{g}-mig-{size}g-{i}",
                    attrs={"type": "mig"},
                    consumesCounters=[
                        {"counterSet": f"gpu-{g}-counters", "counters": {"slices": {"value": str(size)}}}
                    ],
                )
                for i in range(count)
            ]
    return [
        resource_slice("counters", [], count=2, sharedCounters=counters),
        resource_slice("devices", devs, count=2),
    ]


def test_it_says_a_whole_gpu_is_not_free_once_a_partition_uses_its_counters() -> None:
    a = availability(
        mig_pool(),
        claims=[allocated("infer", result("gpu-0-mig-1g-0"))],
        classes=[WHOLE_CLASS, MIG_CLASS],
    )
    assert numbers(a, "whole") == (1, 1)
    blocked = a.devices["gpu-0"]
    assert blocked is not None and blocked.reason == COUNTERS
    assert "counter set gpu-0-counters used by gpu-0-mig-1g-0" in blocked.message
    assert "slices: needs 4, 3 left" in blocked.message
    # Partitions: each of the 11 unused ones fits on its own, but only 3 + 4 slices are left to share.
    assert a.classes["mig"].free == 11
    assert a.classes["mig"].headroom == 7


def test_it_places_partitions_in_the_allocators_order_not_the_best_order() -> None:
    # First fit takes the 1-slice partitions first: 4 per GPU, never the 2-slice ones.
    a = availability(mig_pool(partitions_per_gpu=2), classes=[MIG_CLASS])
    assert numbers(a, "mig") == (12, 8)


def test_it_leaves_the_allocated_state_as_it_found_it() -> None:
    # Headroom for one class must not use up devices for the next class asked about.
    a = availability(
        mig_pool(), classes=[MIG_CLASS, WHOLE_CLASS, MIG_CLASS | {"metadata": {"name": "mig-2"}}]
    )
    assert numbers(a, "mig") == numbers(a, "mig-2") == (12, 8)
    assert numbers(a, "whole") == (2, 2)


def test_it_counts_nothing_in_an_incomplete_pool_and_says_how_much_is_missing() -> None:
    a = availability([resource_slice("s", [device("gpu-0")], count=2, generation=3)])
    assert numbers(a) == (0, 0)
    assert a.devices["gpu-0"] == Blocked(
        POOL_INCOMPLETE, "pool incomplete: 1 of 2 ResourceSlices published at generation 3"
    )


def test_it_counts_nothing_in_an_invalid_pool_and_gives_the_upstream_reason() -> None:
    a = availability(
        [resource_slice("a", [device("gpu-0")], count=2), resource_slice("b", [device("gpu-0")], count=2)]
    )
    assert numbers(a) == (0, 0)
    assert a.classes["gpu"].error == ""  # the node has no room: not a refusal of the question
    assert a.devices["gpu-0"] == Blocked(POOL_INVALID, "pool invalid: duplicate device name gpu-0")


def test_it_counts_a_pool_shared_by_several_nodes_once() -> None:
    slices = [
        resource_slice("net", [device("nic-0"), device("nic-1")], pool="fabric", node=None, allNodes=True)
    ]
    nodes = [{"metadata": {"name": f"node-{i}"}} for i in range(5)]
    a = availability(slices, nodes=nodes, pool="fabric")
    assert numbers(a) == (2, 2)


def test_it_asks_every_node_a_node_selector_picks_and_no_other() -> None:
    # Slice a reaches zone a, slice b zone b: both are counted, through different nodes.
    def zone(z: str) -> J:
        return {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": [z]}]}]
        }

    slices = [
        resource_slice("a", [device("x-0")], pool="fabric", count=2, nodeSelector=zone("a")),
        resource_slice("b", [device("x-1"), device("x-2")], pool="fabric", count=2, nodeSelector=zone("b")),
    ]
    assert numbers(availability(slices, nodes=[NODE, NODE_2], pool="fabric")) == (3, 3)
    only_a = availability(slices, nodes=[NODE], pool="fabric")
    assert numbers(only_a) == (1, 1)
    assert only_a.devices["x-1"] == Blocked(NO_NODE, "no node can reach this device")


def test_it_counts_nothing_for_a_node_that_is_not_there() -> None:
    a = availability([resource_slice("s", [device("gpu-0")])], nodes=[])
    assert numbers(a) == (0, 0)
    assert a.devices["gpu-0"] is not None and a.devices["gpu-0"].reason == NO_NODE


def test_it_says_when_no_class_selects_a_device() -> None:
    a = availability([resource_slice("s", [device("gpu-0", attrs={"type": "gpu"})])], classes=[MIG_CLASS])
    assert numbers(a, "mig") == (0, 0)
    assert a.devices["gpu-0"] == Blocked(NO_CLASS, "no DeviceClass selects this device")


def test_it_reports_a_class_the_allocator_refuses_without_hiding_the_others() -> None:
    broken = device_class("broken", "device.driver ==")
    a = availability([resource_slice("s", [device("gpu-0")])], classes=[broken, GPU_CLASS])
    assert "CEL" in a.classes["broken"].error
    assert numbers(a) == (1, 1)
    assert a.devices["gpu-0"] is None


def test_it_counts_shares_of_a_shareable_device_and_stops_at_the_cap() -> None:
    policy = {"default": "10Gi", "validRange": {"min": "1Gi"}}
    shared = device(
        "gpu-0",
        allowMultipleAllocations=True,
        capacity={"memory": {"value": "80Gi", "requestPolicy": policy}},
    )

    def ask(cap: int) -> Any:
        return pool_availability(
            driver=DRIVER,
            pool="node-1",
            slices=[resource_slice("s", [shared])],
            allocated_claims=[],
            taint_rules=[],
            classes=[GPU_CLASS],
            nodes=[NODE],
            max_per_node=cap,
        ).classes["gpu"]

    assert (ask(256).free, ask(256).headroom, ask(256).capped) == (1, 8, False)  # 8 × 10Gi of 80Gi
    assert (ask(5).headroom, ask(5).capped) == (5, True)


def test_it_names_the_nodes_a_pool_is_bound_to() -> None:
    assert node_local_names([resource_slice("s", [], node="node-3")]) == {"node-3"}
    assert node_local_names([resource_slice("s", [], node=None, allNodes=True)]) is None


# ------------------------------------------------------------------------ pools are independent


def _random_cluster(rng: random.Random) -> tuple[list[J], list[J], list[J], list[J]]:
    """Node-local pools (some partitionable), one shared pool, random allocations and taint rules."""
    nodes = [{"metadata": {"name": f"node-{i}", "labels": {"zone": rng.choice("ab")}}} for i in range(3)]
    slices: list[J] = []
    taken: list[J] = []
    for node in nodes:
        name = node["metadata"]["name"]
        if rng.random() < 0.5:
            for s in mig_pool(partitions_per_gpu=rng.randint(0, 2)):
                s["spec"]["pool"]["name"] = name
                s["spec"]["nodeName"] = name
                s["metadata"]["name"] = f"{name}-{s['metadata']['name']}"
                slices.append(s)
        else:
            devs = [device(f"gpu-{k}", attrs={"type": "gpu"}) for k in range(rng.randint(1, 4))]
            slices.append(resource_slice(f"{name}-s", devs, pool=name, node=name))
        for s in [x for x in slices if x["spec"]["pool"]["name"] == name]:
            for d in s["spec"].get("devices") or []:
                if rng.random() < 0.25:
                    taken.append(result(d["name"], pool=name))
    zone_a = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
    }
    shared = [device(f"net-{k}", attrs={"type": "gpu"}) for k in range(rng.randint(1, 3))]
    slices.append(resource_slice("fabric", shared, pool="fabric", nodeSelector=zone_a))
    claims = [allocated(f"c-{i}", r) for i, r in enumerate(taken)]
    rules = [
        taint_rule(
            "r", {"key": "k", "value": "v", "effect": rng.choice(["NoSchedule", "None"])}, {"pool": "node-1"}
        )
    ]
    return nodes, slices, claims, rules


def _whole_cluster_headroom(
    nodes: list[J], slices: list[J], claims: list[J], rules: list[J], cls: str
) -> int:
    """The headroom what-if's loop over the whole cluster: one allocator, node after node, until no."""
    state = AllocatedState.from_claims(claims)
    allocator = Allocator(
        classes=[WHOLE_CLASS, MIG_CLASS],
        slices=slices,
        state=state,
        taint_rules=rules,
        features=DEFAULT_FEATURES,
    )
    claim = prepare_claim(one_device_claim(cls))
    total = 0
    for node in nodes:
        while (results := allocator.allocate(node, [claim])) is not None:
            total += 1
            state.add_claim({"metadata": {"name": f"copy-{total}"}, "status": {"allocation": results[0]}})
    return total


@pytest.mark.parametrize("seed", range(40))
def test_it_adds_up_per_pool_to_what_placing_copies_over_the_whole_cluster_gives(seed: int) -> None:
    rng = random.Random(seed)
    nodes, slices, claims, rules = _random_cluster(rng)
    pools = sorted({(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in slices})
    for cls in ("whole", "mig"):
        per_pool = 0
        for driver, pool in pools:
            mine = [s for s in slices if s["spec"]["pool"]["name"] == pool]
            bound = node_local_names(mine)
            reaching = [n for n in nodes if bound is None or n["metadata"]["name"] in bound]
            a = pool_availability(
                driver=driver,
                pool=pool,
                slices=mine,
                allocated_claims=claims,
                taint_rules=rules,
                classes=[WHOLE_CLASS, MIG_CLASS],
                nodes=reaching,
            )
            per_pool += a.classes[cls].headroom
            assert a.classes[cls].free == _usable(mine, claims, rules, reaching, cls), (seed, pool, cls)
        assert per_pool == _whole_cluster_headroom(nodes, slices, claims, rules, cls), (seed, cls)


def _usable(slices: list[J], claims: list[J], rules: list[J], nodes: list[J], cls: str) -> int:
    """Devices `explain` calls usable for a one-device claim of `cls` from some node."""
    usable = set()
    for node in nodes:
        for v in explain(
            classes=[WHOLE_CLASS, MIG_CLASS],
            slices=slices,
            allocated_claims=claims,
            claim=one_device_claim(cls),
            node=node,
            taint_rules=rules,
        ):
            if v.reason == "usable":
                usable.add((v.pool, v.device))
    return len(usable)


def test_it_uses_bare_nodes_like_the_what_if_without_node_objects() -> None:
    a = availability([resource_slice("s", [device("gpu-0")])], nodes=[bare_node("node-1")])
    assert numbers(a) == (1, 1)
