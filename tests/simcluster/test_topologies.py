"""The shipped topologies describe the worlds the demo, the tests and the benchmarks rely on."""

from __future__ import annotations

import pytest

from dra.objects import NUMA_ATTRIBUTE
from simcluster.store import Store
from simcluster.topology import TopologyError, build_topology, load_topology


def test_it_ships_tiny_demo_and_large_worlds_of_the_promised_size() -> None:
    tiny, demo, large = load_topology("tiny"), load_topology("demo"), load_topology("large")

    assert len(tiny.nodes) == 3
    assert len(demo.nodes) == 18  # 16 DRA workers + 2 device-plugin nodes
    assert len(large.nodes) >= 1000 and large.device_count >= 10_000
    assert large.workloads == ()


@pytest.mark.parametrize("name", ["demo", "large"])
def test_every_node_has_an_internal_ip_of_its_own(name: str) -> None:
    addresses = [
        a["address"]
        for n in load_topology(name).nodes
        for a in n["status"]["addresses"]
        if a["type"] == "InternalIP"
    ]
    assert len(addresses) == len(load_topology(name).nodes)
    assert len(set(addresses)) == len(addresses), "two nodes share an InternalIP"
    assert all(a.startswith("10.") and not a.endswith((".0", ".255")) for a in addresses)


def test_it_gives_every_demo_node_eight_gpus_and_two_nics() -> None:
    demo = load_topology("demo")
    for node in demo.nodes:
        name = node["metadata"]["name"]
        if name.startswith("legacy-"):
            continue  # the device-plugin nodes (issue 13)
        gpus = [p for p in demo.pools if p.node == name and p.driver == "gpu.example.com"][0]
        nics = [p for p in demo.pools if p.node == name and p.driver == "nic.example.com"][0]
        physical = [d for d in gpus.devices if d["attributes"]["type"]["string"] == "gpu"]
        assert len(physical) == 8, name
        assert len(nics.devices) == 2, name


def test_it_gives_every_device_a_numa_node_and_a_pci_bus_id() -> None:
    for pool in load_topology("tiny").pools:
        for device in pool.devices:
            assert isinstance(device["attributes"][NUMA_ATTRIBUTE]["int"], int)
            assert device["attributes"]["resource.kubernetes.io/pciBusID"]["string"].startswith("0000:")


def test_it_models_a_partitionable_gpu_with_one_counter_set_consumed_by_the_full_gpu_and_its_partitions() -> (
    None
):
    tiny = load_topology("tiny")
    pool = next(p for p in tiny.pools if p.node == "node-2" and p.driver == "gpu.example.com")

    assert [c["name"] for c in pool.counter_sets] == ["gpu-3-counters"]
    consumers = [d for d in pool.devices if d.get("consumesCounters")]
    profiles = sorted({d["attributes"]["profile"]["string"] for d in consumers})
    assert profiles == ["1g.5gb", "2g.10gb", "3g.20gb", "full"]
    assert all(d["consumesCounters"][0]["counterSet"] == "gpu-3-counters" for d in consumers)


def test_it_maps_example_com_gpu_onto_the_gpu_device_class() -> None:
    classes = {c["metadata"]["name"]: c["spec"] for c in load_topology("tiny").device_classes}
    assert classes["gpu.example.com"]["extendedResourceName"] == "example.com/gpu"
    assert {"gpu.example.com", "mig.example.com", "nic.example.com"} <= set(classes)


@pytest.mark.parametrize("name", ["tiny", "demo", "features"])
def test_it_creates_every_seed_object_without_a_validation_error(name: str) -> None:
    store = Store()
    for plural, obj in load_topology(name).seed_objects():
        if plural == "namespaces" and obj["metadata"]["name"] == "default":
            continue
        store.create(plural, obj)
    assert len(store.list("nodes")) == len(load_topology(name).nodes)


def test_it_adds_generated_one_gpu_pods_to_large_on_request() -> None:
    large = load_topology("large", workload_pods=5)
    pods = [obj for plural, obj in large.workloads if plural == "pods"]
    assert len(pods) == 5
    assert pods[0]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == "bench-gpu"


def test_it_names_the_field_when_a_node_group_uses_an_unknown_device_model() -> None:
    document = {"nodes": [{"name": "n-{i}", "devices": [{"model": "nope"}]}], "deviceModels": {}}
    with pytest.raises(TopologyError, match=r"nodes\[0\]\.devices\[0\]\.model"):
        build_topology(document, source="bad.yaml")


def test_it_refuses_an_unknown_topology_name_listing_the_available_ones() -> None:
    with pytest.raises(TopologyError, match="available: demo, features, large, tiny"):
        load_topology("nope")


def test_it_grows_large_to_any_node_count_with_the_same_device_mix() -> None:
    large, small = load_topology("large"), load_topology("scale:3:rules=4", workload_pods=2)
    assert [n["metadata"]["name"] for n in small.nodes] == ["node-0000", "node-0001", "node-0002"]
    assert small.device_count == 3 * large.device_count // len(large.nodes)
    assert small.pools[0].devices == large.pools[0].devices  # node-0000's GPUs, attribute for attribute
    rules = [obj for plural, obj in small.workloads if plural == "devicetaintrules"]
    assert [r["spec"]["deviceSelector"]["pool"] for r in rules] == [
        "node-0000",
        "node-0001",
        "node-0002",
        "node-0000",
    ]
    assert sum(1 for plural, _ in small.workloads if plural == "pods") == 2


def test_it_names_the_rule_when_a_scale_topology_is_malformed() -> None:
    with pytest.raises(TopologyError, match="scale:<nodes>"):
        load_topology("scale:many")
    with pytest.raises(TopologyError, match="only option is rules"):
        load_topology("scale:10:claims=3")
