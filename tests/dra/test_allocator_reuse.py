"""The reusable `Allocator` with an incrementally maintained `AllocatedState`."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from dra.allocator import (
    DEFAULT_FEATURES,
    AllocatedState,
    AllocationError,
    Allocator,
    allocate,
    prepare_claim,
)
from dra.allocator.model import parse_quantity
from tests.dra.allocator_cases import (
    GPU_CLASS,
    NODE,
    NODE_2,
    claim,
    device,
    device_class,
    devices,
    exactly,
    first_available,
    resource_slice,
    sub,
)

SLICES = [
    resource_slice("n1", devices("gpu-0", "gpu-1"), pool="node-1", node="node-1"),
    resource_slice("n2", devices("gpu-0"), pool="node-2", node="node-2"),
]


def _place(allocator: Allocator, state: AllocatedState, name: str) -> str | None:
    claim_json = claim(name, exactly("gpu"))
    prepared = prepare_claim(claim_json)
    for node in (NODE, NODE_2):
        got = allocator.allocate(node, [prepared])
        if got is not None:
            claim_json["status"] = {"allocation": got[0]}
            state.add_claim(claim_json)
            result = got[0]["devices"]["results"][0]
            return f"{result['pool']}/{result['device']}"
    return None


def test_it_fills_nodes_in_order_and_frees_devices_on_release() -> None:
    state = AllocatedState()
    allocator = Allocator(classes=[GPU_CLASS], slices=SLICES, state=state, features=DEFAULT_FEATURES)
    placed = [_place(allocator, state, f"c{i}") for i in range(4)]
    assert placed == ["node-1/gpu-0", "node-1/gpu-1", "node-2/gpu-0", None]

    released = claim("c1", exactly("gpu"))
    released["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"}
                ]
            }
        }
    }
    state.remove_claim(released)
    assert _place(allocator, state, "c5") == "node-1/gpu-1"


def test_it_refuses_to_release_a_device_the_claim_does_not_hold() -> None:
    stranger = claim("stranger", exactly("gpu"))
    stranger["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
                ]
            }
        }
    }
    with pytest.raises(AllocationError, match="not recorded as allocated"):
        AllocatedState().remove_claim(stranger)


def test_it_notices_changed_node_labels() -> None:
    zone_slice = resource_slice(
        "z",
        devices("gpu-0"),
        pool="zone-a",
        nodeSelector={
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
        },
    )
    allocator = Allocator(classes=[GPU_CLASS], slices=[zone_slice], features=DEFAULT_FEATURES)
    the_claim = prepare_claim(claim("c", exactly("gpu")))
    assert allocator.allocate(NODE, [the_claim]) is not None
    moved: dict[str, Any] = {"metadata": {"name": "node-1", "labels": {"zone": "b"}}}
    assert allocator.allocate(moved, [the_claim]) is None


def test_it_gives_the_same_answer_as_the_one_shot_function() -> None:
    claims = [claim("a", exactly("gpu", count=2)), claim("b", exactly("gpu"))]
    one_shot = allocate(
        classes=[GPU_CLASS],
        slices=SLICES,
        allocated_claims=[],
        claims=claims,
        node=NODE,
        features=DEFAULT_FEATURES,
    )
    reused = Allocator(classes=[GPU_CLASS], slices=SLICES, features=DEFAULT_FEATURES).allocate(NODE, claims)
    assert one_shot is None and reused is None
    first = Allocator(classes=[GPU_CLASS], slices=SLICES, features=DEFAULT_FEATURES).allocate(
        NODE, claims[:1]
    )
    assert first == allocate(
        classes=[GPU_CLASS],
        slices=SLICES,
        allocated_claims=[],
        claims=claims[:1],
        node=NODE,
        features=DEFAULT_FEATURES,
    )


def test_it_refuses_unknown_feature_names() -> None:
    with pytest.raises(AllocationError, match="unknown feature 'DRAGoFaster'"):
        Allocator(classes=[], slices=[], features={"DRAGoFaster"})


def test_it_accepts_feature_gate_names_with_the_dra_prefix() -> None:
    allocator = Allocator(classes=[], slices=[], features={"DRAAdminAccess", "DRADeviceTaints"})
    assert allocator.features == {"AdminAccess", "DeviceTaints"}


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("80Gi", "80Gi"),
        ("1024Mi", "1Gi"),
        ("1536", "1536"),
        ("2000", "2k"),
        ("1.5", "1500m"),
        ("10G", "10G"),
        ("0.5Gi", "512Mi"),
    ],
)
def test_it_writes_quantities_in_canonical_form(text: str, canonical: str) -> None:
    assert str(parse_quantity(text, field="q")) == canonical


def test_it_names_the_field_of_a_bad_quantity() -> None:
    with pytest.raises(
        AllocationError, match="capacity.requests\\[memory\\]: quantity .12 apples.: quantities must match"
    ):
        prepare_claim(claim("c", exactly("gpu", capacity={"requests": {"memory": "12 apples"}})))


def test_it_tries_combinations_not_permutations_within_a_request() -> None:
    eight = [resource_slice("s", devices(*(f"gpu-{i}" for i in range(8))))]
    allocator = Allocator(
        classes=[GPU_CLASS, device_class("none", 'device.driver == "nothing.example.com"')],
        slices=eight,
        features=DEFAULT_FEATURES,
    )
    impossible = claim("c", exactly("three", count=3), exactly("never", cls="none"))
    assert allocator.allocate(NODE, [impossible]) is None
    # 8 choose 3 = 56 device sets; trying orderings too would take 8*7*6 = 336 leaves.
    assert allocator.search_steps < 336


def test_it_allocates_hundreds_of_claims_in_one_call() -> None:
    big = [resource_slice("s", devices(*(f"gpu-{i}" for i in range(600))))]
    claims = [claim(f"c{i}", exactly("gpu")) for i in range(600)]
    got = Allocator(classes=[GPU_CLASS], slices=big, features=DEFAULT_FEATURES).allocate(NODE, claims)
    assert got is not None
    assert got[-1]["devices"]["results"][0]["device"] == "gpu-599"


def test_it_aborts_a_search_over_its_step_limit() -> None:
    eight = [resource_slice("s", devices(*(f"gpu-{i}" for i in range(8))))]
    allocator = Allocator(
        classes=[GPU_CLASS, device_class("none", 'device.driver == "nothing.example.com"')],
        slices=eight,
        features=DEFAULT_FEATURES,
        max_search_steps=50,
    )
    with pytest.raises(AllocationError, match="aborted after 50 search steps"):
        allocator.allocate(NODE, [claim("c", exactly("three", count=3), exactly("never", cls="none"))])
    # The limit is per call: a small search still succeeds afterwards.
    assert allocator.allocate(NODE, [claim("d", exactly("one"))]) is not None


CLASS_A = device_class("class-a", 'device.driver == "driver-a"')
CLASS_B = device_class("class-b", 'device.driver == "driver-b"')


def _numbered(name: str, pool: str, driver: str, n: int) -> dict[str, Any]:
    return resource_slice(name, devices(*(f"device-{i}" for i in range(n))), pool=pool, driver=driver)


def test_it_backtracks_over_the_32_result_limit_in_as_many_steps_as_upstream() -> None:
    allocator = Allocator(
        classes=[CLASS_A], slices=[_numbered("slice-1", "pool-1", "driver-a", 64)], features=DEFAULT_FEATURES
    )
    both_halves = claim(
        "c",
        first_available(
            "req-0", sub("sub-0", cls="class-a", count=32), sub("sub-1", cls="class-a", count=16)
        ),
        first_available(
            "req-1", sub("sub-0", cls="class-a", count=32), sub("sub-1", cls="class-a", count=16)
        ),
    )
    got = allocator.allocate(NODE, [both_halves])
    assert got is not None
    results = got[0]["devices"]["results"]
    assert [r["request"] for r in results] == ["req-0/sub-1"] * 16 + ["req-1/sub-1"] * 16
    # Upstream's "prioritized-list-max-allocation-limit-request" case: 75 allocateOne calls.
    assert allocator.search_steps == 75


def test_it_gives_up_on_an_all_subrequest_that_would_exceed_32_results_like_upstream() -> None:
    allocator = Allocator(
        classes=[CLASS_A, CLASS_B],
        slices=[
            _numbered("slice-1", "pool-1", "driver-a", 31),
            _numbered("slice-2", "pool-2", "driver-b", 2),
        ],
        features=DEFAULT_FEATURES,
    )
    the_claim = claim(
        "c",
        first_available(
            "req-0", sub("sub-0", cls="class-a", allocationMode="All"), sub("sub-1", cls="class-a", count=2)
        ),
        exactly("req-1", cls="class-b", count=2),
    )
    got = allocator.allocate(NODE, [the_claim])
    assert got is not None
    assert [f"{r['request']}={r['pool']}/{r['device']}" for r in got[0]["devices"]["results"]] == [
        "req-0/sub-1=pool-1/device-0",
        "req-0/sub-1=pool-1/device-1",
        "req-1=pool-2/device-0",
        "req-1=pool-2/device-1",
    ]
    # Upstream's "prioritized-list-max-allocation-allocation-mode-all" case: 42 allocateOne calls.
    assert allocator.search_steps == 42


def test_it_returns_shared_capacity_when_a_claim_is_released() -> None:
    nic = resource_slice(
        "nics", [device("nic-0", allowMultipleAllocations=True, capacity={"bandwidth": {"value": "10G"}})]
    )
    state = AllocatedState()
    allocator = Allocator(classes=[GPU_CLASS], slices=[nic], state=state, features=DEFAULT_FEATURES)

    def ask(name: str) -> dict[str, Any]:
        return claim(name, exactly("nic", capacity={"requests": {"bandwidth": "6G"}}))

    first = ask("first")
    got = allocator.allocate(NODE, [first])
    assert got is not None
    first["status"] = {"allocation": got[0]}
    state.add_claim(first)
    assert allocator.allocate(NODE, [ask("second")]) is None  # 6G + 6G > 10G
    state.remove_claim(first)
    assert allocator.allocate(NODE, [ask("third")]) is not None


def test_it_stops_a_search_at_its_deadline() -> None:
    from dra.allocator import AllocationTimeout

    ticks = iter(range(10**9))  # the clock advances one second per look
    slices = [resource_slice("s", devices(*(f"gpu-{i}" for i in range(12))))]
    allocator = Allocator(
        classes=[GPU_CLASS, device_class("none", 'device.driver == "nothing.example.com"')],
        slices=slices,
        features=DEFAULT_FEATURES,
        deadline=0.5,
        monotonic=lambda: float(next(ticks)),
    )
    # Five GPUs then a device nobody has: every combination of five is tried before giving up.
    wanted = claim("c", exactly("gpu", count=5), exactly("other", cls="none"))
    with pytest.raises(AllocationTimeout, match="^filter operation aborted: context deadline exceeded"):
        allocator.allocate(NODE, [wanted])
    assert allocator.search_steps < 200  # stopped at the second look at the clock, not after 792 combinations


def test_a_prepared_claim_and_its_plan_are_freed_without_the_cyclic_collector() -> None:
    """The claim caches its plan per allocator; the plan must not point back at the claim, or every
    availability run (an allocator and a claim per pool) is left for the cyclic collector."""
    allocator = Allocator(
        classes=[GPU_CLASS], slices=SLICES, state=AllocatedState(), features=DEFAULT_FEATURES
    )
    prepared = prepare_claim(claim("c0", exactly("gpu")))
    assert allocator.allocate(NODE, [prepared]) is not None
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        del prepared
        gc.collect()
        left = sorted({type(o).__qualname__ for o in gc.garbage})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []
