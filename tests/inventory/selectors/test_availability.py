"""Free devices and headroom per DeviceClass, kept current by the mirror (dra.availability per pool)."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.mirror.writer import AVAILABILITY_INLINE, BatchWriter, Event
from inventory.models import ClassAvailability
from inventory.selectors.classes import class_overview
from inventory.selectors.devices import device_list
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db
GPU = "gpu.example.com"


def numbers(name: str = GPU) -> tuple[int, int]:
    summary = next(c for c in class_overview().classes if c.name == name)
    return summary.free, summary.headroom


def two_nodes() -> list[Any]:
    nodes = [f.node("node-0"), f.node("node-1")]
    f.write(
        ("deviceclasses", f.device_class(GPU)),
        *[("nodes", n) for n in nodes],
        (
            "resourceslices",
            f.resource_slice("s0", pool="node-0", node="node-0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")]),
        ),
        ("resourceslices", f.resource_slice("s1", pool="node-1", node="node-1", devices=[f.gpu("gpu-0")])),
    )
    return nodes


def test_it_counts_free_devices_and_follows_claims() -> None:
    two_nodes()
    assert numbers() == (3, 3)
    claim = f.claim("train", results=[f.result("gpu-0")])
    f.write(("resourceclaims", claim))
    assert numbers() == (2, 2)
    assert f.device("gpu-0").blocked == "in-use"
    f.delete("resourceclaims", claim)
    assert numbers() == (3, 3)
    assert f.device("gpu-0").blocked == ""


def test_it_follows_taint_rules_and_names_the_rule_on_the_device() -> None:
    two_nodes()
    rule = f.taint_rule("drain", selector={"pool": "node-1"}, effect="NoSchedule")
    f.write(("devicetaintrules", rule))
    assert numbers() == (2, 2)
    blocked = f.device("gpu-0", pool="node-1")
    assert (blocked.blocked, blocked.blocked_reason) == (
        "taint",
        "untolerated taint example.com/maint=x:NoSchedule from DeviceTaintRule drain",
    )
    assert [d.name for d in device_list(filters={"allocatable": "taint"})] == ["gpu-0"]
    f.delete("devicetaintrules", rule)
    assert numbers() == (3, 3)


def test_it_counts_a_new_class_and_forgets_a_deleted_one() -> None:
    two_nodes()
    cls = f.device_class("h100", expression='device.attributes["gpu.example.com"].model == "H100"')
    f.write(("deviceclasses", cls))
    assert numbers("h100") == (3, 3)
    f.delete("deviceclasses", cls)
    assert not ClassAvailability.objects.filter(device_class="h100").exists()


def test_it_counts_nothing_on_a_node_that_is_gone_as_the_what_if_does() -> None:
    _node_0, node_1 = two_nodes()
    f.delete("nodes", node_1)
    assert numbers() == (2, 2)
    assert f.device("gpu-0", pool="node-1").blocked == "no-node"


def test_it_recomputes_a_shared_pool_when_node_labels_change() -> None:
    zone_a = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
    }
    fabric = f.resource_slice("fabric", pool="fabric", node="", devices=[f.gpu("net-0"), f.gpu("net-1")])
    fabric["spec"].pop("allNodes")
    fabric["spec"]["nodeSelector"] = zone_a
    node = f.node("node-0", zone="b")
    f.write(("deviceclasses", f.device_class(GPU)), ("nodes", node), ("resourceslices", fabric))
    assert numbers() == (0, 0)
    relabelled: Any = {**node, "metadata": {**node["metadata"], "labels": {"zone": "a"}}}
    f.write(("nodes", relabelled), ("nodes", f.node("node-1", zone="a")))
    assert numbers() == (2, 2)  # reachable from two nodes, counted once


def test_it_says_which_partitions_used_a_whole_gpus_counters() -> None:
    f.partitionable_pool()
    f.write(("nodes", f.node("node-0")))
    f.write(("resourceclaims", f.claim("mig", results=[f.result("gpu-0-mig-0"), f.result("gpu-0-mig-1")])))
    device = f.device("gpu-0-mig-2")
    assert device.allocation_state == "free" and device.blocked == "counters"
    assert "counter set gpu-0-slices used by gpu-0-mig-0, gpu-0-mig-1" in device.blocked_reason
    summary = class_overview().classes[0]
    assert (summary.free, summary.headroom, summary.blocked) == (0, 0, {"counters": 1})


def test_it_recomputes_many_pools_in_chunks_between_batches() -> None:
    pools = AVAILABILITY_INLINE + 10
    f.write(
        ("deviceclasses", f.device_class(GPU)),
        *[
            (
                "resourceslices",
                f.resource_slice(f"s{i}", pool=f"node-{i}", node=f"node-{i}", devices=[f.gpu("gpu-0")]),
            )
            for i in range(pools)
        ],
    )
    assert numbers() == (pools, pools)
    writer = BatchWriter()
    writer.apply([Event("devicetaintrules", "ADDED", f.taint_rule("all", selector={}), "9")], defer=True)
    assert writer.has_deferred
    while writer.refresh_deferred():
        pass
    assert numbers() == (0, 0)
