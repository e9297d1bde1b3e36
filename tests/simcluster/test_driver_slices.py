"""The simulated driver publishes pools the way a DRA driver must."""

from __future__ import annotations

from typing import Any

from simcluster.controllers.driver import Driver, build_pool_slices, split_devices
from simcluster.store import Store
from simcluster.topology import load_topology


def _plain(count: int) -> list[dict[str, Any]]:
    return [{"name": f"dev-{i}", "attributes": {"index": {"int": i}}} for i in range(count)]


def test_it_splits_a_pool_of_200_plain_devices_into_slices_of_at_most_128() -> None:
    assert [len(chunk) for chunk in split_devices(_plain(200))] == [128, 72]


def test_it_limits_a_slice_holding_tainted_devices_to_64() -> None:
    devices = _plain(100)
    devices[10]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    chunks = split_devices(devices)
    assert [len(chunk) for chunk in chunks] == [64, 36]


def test_it_publishes_shared_counters_in_their_own_slice_and_counts_every_slice() -> None:
    slices = build_pool_slices(
        driver="gpu.example.com",
        node="n1",
        pool="n1",
        devices=_plain(3),
        counter_sets=[{"name": "gpu-0-counters", "counters": {"memory": {"value": "40Gi"}}}],
        generation=4,
    )
    assert [sorted(k for k in s["spec"] if k in ("devices", "sharedCounters")) for s in slices] == [
        ["sharedCounters"],
        ["devices"],
    ]
    assert {(s["spec"]["pool"]["generation"], s["spec"]["pool"]["resourceSliceCount"]) for s in slices} == {
        (4, 2)
    }
    assert slices[0]["metadata"]["generateName"] == "n1-gpu.example.com-"


def _published(topology: str = "tiny") -> tuple[Store, Driver]:
    store = Store()
    world = load_topology(topology)
    for plural, obj in world.seed_objects():
        if plural in ("nodes", "deviceclasses"):
            store.create(plural, obj)
    driver = Driver(store, world)
    driver.publish_all()
    return store, driver


def test_it_publishes_one_pool_per_driver_and_node_named_after_the_node() -> None:
    store, _ = _published()
    pools = {(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in store.list("resourceslices")}
    assert pools == {
        (d, n) for d in ("gpu.example.com", "nic.example.com") for n in ("node-0", "node-1", "node-2")
    }
    for item in store.list("resourceslices"):
        name = item["metadata"]["name"]
        assert name.startswith(f"{item['spec']['nodeName']}-{item['spec']['driver']}-")
        assert len(name.rsplit("-", 1)[1]) == 5


def test_it_bumps_the_generation_in_every_slice_of_the_pool_when_a_device_is_marked_unhealthy() -> None:
    store, driver = _published()
    before = driver.pool_slices("gpu.example.com", "node-2")
    assert len(before) == 2  # counters + devices

    taint = driver.mark_unhealthy("gpu.example.com", "node-2", "gpu-1", effect="NoExecute")

    after = driver.pool_slices("gpu.example.com", "node-2")
    assert [s["metadata"]["name"] for s in after] == [s["metadata"]["name"] for s in before]
    assert {s["spec"]["pool"]["generation"] for s in after} == {before[0]["spec"]["pool"]["generation"] + 1}
    device = next(d for s in after for d in s["spec"].get("devices", []) if d["name"] == "gpu-1")
    assert device["taints"] == [taint]
    assert taint["effect"] == "NoExecute" and taint["timeAdded"]


def test_it_removes_the_driver_taint_when_the_device_is_healthy_again() -> None:
    store, driver = _published()
    driver.mark_unhealthy("gpu.example.com", "node-0", "gpu-0", effect="NoSchedule")
    driver.mark_healthy("gpu.example.com", "node-0", "gpu-0")

    (slice_,) = driver.pool_slices("gpu.example.com", "node-0")
    assert slice_["spec"]["pool"]["generation"] == 3
    assert all("taints" not in d for d in slice_["spec"]["devices"])


def test_it_resplits_a_pool_when_taints_lower_the_slice_limit() -> None:
    store = Store()
    document_world = load_topology("large")
    world = type(document_world)(
        name="wide",
        namespaces=(),
        nodes=(),
        device_classes=(),
        pools=(
            type(document_world.pools[0])(driver="gpu.example.com", node="wide", devices=tuple(_plain(100))),
        ),
        drivers=("gpu.example.com",),
    )
    driver = Driver(store, world)
    driver.publish_all()
    assert len(driver.pool_slices("gpu.example.com", "wide")) == 1

    driver.mark_unhealthy("gpu.example.com", "wide", "dev-3")

    slices = driver.pool_slices("gpu.example.com", "wide")
    assert sorted(len(s["spec"]["devices"]) for s in slices) == [36, 64]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in slices} == {2}


def test_it_adopts_its_own_unchanged_slices_after_a_restart_without_a_new_generation() -> None:
    store, driver = _published()
    versions = {s["metadata"]["name"]: s["metadata"]["resourceVersion"] for s in store.list("resourceslices")}

    Driver(store, load_topology("tiny"), clock=driver.clock).publish_all()

    assert {
        s["metadata"]["name"]: s["metadata"]["resourceVersion"] for s in store.list("resourceslices")
    } == versions
