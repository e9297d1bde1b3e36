"""The device counters the Overview, the classes and the Nodes list read (DeviceCount, NodeDeviceCount), and the
attribute lines the attribute filter reads (DeviceAttribute), stay equal to a recount of the Device rows after any series of mirror changes: slices added, republished,
moved to another node, left incomplete and deleted, claims allocating and releasing devices, rules and
classes coming and going, re-lists that drop what is gone — on SQLite and on PostgreSQL (triggers)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from django.db.models import Count, Q

from inventory.mirror.derive import counts
from inventory.mirror.writer import BatchWriter, Event, Replace
from inventory.models import FREE, Device, DeviceAttribute, DeviceCount, NodeDeviceCount
from inventory.selectors.classes import class_overview
from inventory.selectors.nodes import node_list
from inventory.selectors.overview import overview_totals
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db
JSON = dict[str, Any]
#: the Device columns a DeviceCount row is grouped by: every field of the model but its key and its count
GROUP = [f.name for f in DeviceCount._meta.concrete_fields if f.name not in ("id", "n")]


def counters() -> Counter[tuple[Any, ...]]:
    rows = DeviceCount.objects.values_list(*GROUP, "n")
    assert all(r[-1] > 0 for r in rows), "a counter row at zero or below is left behind"
    return Counter({tuple(r[:-1]): r[-1] for r in rows})


def recount() -> Counter[tuple[Any, ...]]:
    rows = Device.objects.values_list(*GROUP).annotate(n=Count("id")).order_by()
    return Counter({tuple(r[:-1]): r[-1] for r in rows})


def node_counters() -> dict[tuple[str, str], tuple[int, int, int]]:
    rows = NodeDeviceCount.objects.values_list("node_name", "driver", "total", "allocated", "tainted")
    assert all(r[2] > 0 for r in rows), "a node counter row at zero is left behind"
    return {(r[0], r[1]): (r[2], r[3], r[4]) for r in rows}


def node_recount() -> dict[tuple[str, str], tuple[int, int, int]]:
    rows = (
        Device.objects.values_list("node_name", "driver")
        .annotate(
            total=Count("id"),
            allocated=Count("id", filter=~Q(allocation_state=FREE)),
            tainted=Count("id", filter=Q(tainted=True)),
        )
        .order_by()
    )
    return {(r[0], r[1]): (r[2], r[3], r[4]) for r in rows}


def attribute_lines() -> set[tuple[int, str, bool]]:
    return set(DeviceAttribute.objects.values_list("device_id", "line", "own"))


def attribute_recount() -> set[tuple[int, str, bool]]:
    """Every line of a qualified name, `own` when its domain is the device's driver."""
    return {
        (pk, line, line.startswith(driver + "/"))
        for pk, driver, text in Device.objects.values_list("pk", "driver", "attribute_index")
        for line in text.split("\n")
        if "/" in line.partition("=")[0]
    }


def assert_counters_agree() -> None:
    assert attribute_lines() == attribute_recount()
    assert DeviceAttribute.objects.count() == len(attribute_lines()), "a line is written twice"
    assert counters() == recount()
    assert node_counters() == node_recount()
    devices = Device.objects
    assert overview_totals() | {"claims": 0, "pending_claims": 0, "rules": 0} == {
        "devices": devices.count(),
        "allocated": devices.exclude(allocation_state=FREE).count(),
        "tainted": devices.filter(tainted=True).count(),
        "no_execute": devices.filter(taint_no_execute=True).count(),
        "incomplete": devices.filter(pool_complete=False).count(),
        "claims": 0,
        "pending_claims": 0,
        "rules": 0,
    }


class Cluster:
    """What the API server holds; every change goes to the mirror's writer as the watch would send it."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.writer = BatchWriter()
        self.slices: dict[str, JSON] = {}  # name → object
        self.claims: dict[str, JSON] = {}
        self.rules: dict[str, JSON] = {}
        self.classes: dict[str, JSON] = {}
        self.rv = 10

    def send(self, kind: str, obj: JSON, deleted: bool = False) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.writer.apply([Event(kind, "DELETED" if deleted else "MODIFIED", obj, str(self.rv))])

    def slice_step(self) -> None:
        rng = self.rng
        node = f"node-{rng.randrange(6)}"
        driver = rng.choice(["gpu.example.com", "nic.example.com"])
        name = f"{driver.split('.')[0]}-{node}-{rng.randrange(2)}"
        if name in self.slices and rng.random() < 0.3:
            self.send("resourceslices", self.slices.pop(name), deleted=True)
            return
        old = self.slices.get(name)
        generation = ((old or {}).get("spec", {}).get("pool", {}).get("generation", 0)) + rng.choice([0, 1])
        devices = [
            f.gpu(
                f"dev-{i}",
                model=rng.choice(["H100", "A100"]),
                taints=[{"key": "k", "effect": rng.choice(["NoSchedule", "NoExecute", "None"])}]
                if rng.random() < 0.2
                else None,
            )
            for i in range(rng.randrange(0, 5))
        ]
        for device in devices:
            if rng.random() < 0.3:  # a list attribute (its elements are lines of their own)
                device["attributes"]["links"] = {
                    "strings": rng.sample(["a", "b", "c"], k=rng.randrange(1, 4))
                }
            if rng.random() < 0.2:
                device["attributes"] = {}
        obj = f.resource_slice(
            name,
            driver=driver,
            pool=name.rsplit("-", 1)[0],
            node=rng.choice([node, node, f"node-{rng.randrange(6)}"]),  # sometimes the pool moves
            generation=max(generation, 1),
            count=rng.choice([1, 1, 1, 2]),  # sometimes incomplete
            devices=devices,
        )
        if old:
            obj["metadata"]["uid"] = old["metadata"]["uid"]
        self.slices[name] = obj
        self.send("resourceslices", obj)

    def claim_step(self) -> None:
        rng = self.rng
        if self.claims and rng.random() < 0.35:
            name = rng.choice(sorted(self.claims))
            self.send("resourceclaims", self.claims.pop(name), deleted=True)
            return
        devices = list(Device.objects.values_list("driver", "pool", "name"))
        if not devices:
            return
        picked = rng.sample(devices, k=min(len(devices), rng.randrange(1, 3)))
        name = f"claim-{rng.randrange(8)}"
        obj = f.claim(
            name,
            results=[f.result(d, driver=dr, pool=p, request="gpu") for dr, p, d in picked]
            if rng.random() < 0.8
            else None,
        )
        if name in self.claims:
            obj["metadata"]["uid"] = self.claims[name]["metadata"]["uid"]
        self.claims[name] = obj
        self.send("resourceclaims", obj)

    def rule_step(self) -> None:
        rng = self.rng
        name = f"rule-{rng.randrange(4)}"
        if name in self.rules and rng.random() < 0.5:
            self.send("devicetaintrules", self.rules.pop(name), deleted=True)
            return
        pool = rng.choice([s["spec"]["pool"]["name"] for s in self.slices.values()] or ["gpu-node-0"])
        obj = f.taint_rule(
            name,
            selector={"pool": pool} if rng.random() < 0.7 else {"driver": "gpu.example.com"},
            effect=rng.choice(["NoSchedule", "NoExecute", "None"]),
        )
        if name in self.rules:
            obj["metadata"]["uid"] = self.rules[name]["metadata"]["uid"]
        self.rules[name] = obj
        self.send("devicetaintrules", obj)

    def class_step(self) -> None:
        rng = self.rng
        name = rng.choice(["gpu.example.com", "nic.example.com", "h100"])
        if name in self.classes and rng.random() < 0.4:
            self.send("deviceclasses", self.classes.pop(name), deleted=True)
            return
        expression = 'device.attributes["gpu.example.com"].model == "H100"' if name == "h100" else None
        obj = f.device_class(name, expression=expression)
        if name in self.classes:
            obj["metadata"]["uid"] = self.classes[name]["metadata"]["uid"]
        self.classes[name] = obj
        self.send("deviceclasses", obj)

    def relist_step(self) -> None:
        """A re-list of the slices: some vanished while the watch was down, the rest come back as they are."""
        rng = self.rng
        for name in [n for n in sorted(self.slices) if rng.random() < 0.3]:
            del self.slices[name]
        self.rv += 1
        self.writer.apply([Replace("resourceslices", list(self.slices.values()), str(self.rv))])


@pytest.mark.parametrize("recount_from", [counts.RECOUNT_MIN_ROWS, 1], ids=["as-configured", "every-write"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_counters_equal_a_recount_after_random_mirror_changes(
    seed: int, recount_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`every-write`: SQLite's triggers paused for every page of devices and the counters recounted
    (`inventory.mirror.derive.counts`), not only for large ones."""
    monkeypatch.setattr(counts, "RECOUNT_MIN_ROWS", recount_from)
    cluster = Cluster(seed)
    steps = [cluster.slice_step] * 5 + [cluster.claim_step] * 3 + [cluster.rule_step, cluster.class_step]
    for i in range(60):
        if i % 15 == 14:
            cluster.relist_step()
        else:
            cluster.rng.choice(steps)()
        assert_counters_agree()
    assert Device.objects.exists(), "the series should leave some devices to count"
    # Everything goes: the counters go back to nothing.
    cluster.writer.apply([Replace("resourceslices", [], "99999")])
    assert_counters_agree()
    assert not DeviceCount.objects.exists() and not NodeDeviceCount.objects.exists()
    assert not DeviceAttribute.objects.exists()


def test_the_overview_classes_and_nodes_read_the_counters() -> None:
    f.write(
        ("deviceclasses", f.device_class("gpu.example.com")),
        ("resourceslices", f.resource_slice("s0", node="node-0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])),
        ("resourceslices", f.resource_slice("s1", pool="node-1", node="node-1", devices=[f.gpu("gpu-0")])),
        ("resourceclaims", f.claim("c", results=[f.result("gpu-1")])),
        ("devicetaintrules", f.taint_rule("r", selector={"pool": "node-1"}, effect="NoExecute")),
    )
    assert_counters_agree()
    totals = overview_totals()
    assert (totals["devices"], totals["allocated"], totals["tainted"], totals["no_execute"]) == (3, 1, 1, 1)
    gpu = next(c for c in class_overview().classes if c.name == "gpu.example.com")
    assert (gpu.total, gpu.allocated, gpu.tainted_no_execute) == (3, 1, 1)
    nodes = {n.name: (n.device_count, n.allocated, n.tainted) for n in node_list()}
    assert nodes == {"node-0": (2, 1, 0), "node-1": (1, 0, 1)}
    f.delete("resourceslices", _slice("s1"))
    assert {n.name for n in node_list()} == {"node-0"}
    assert overview_totals()["devices"] == 2


def _slice(name: str) -> JSON:
    from inventory.models import KubeObject

    return KubeObject.objects.get(kind="resourceslices", name=name).raw


def test_the_counters_follow_a_rule_over_hundreds_of_devices() -> None:
    """Hundreds of device rows changed at once (PostgreSQL: one COPY + UPDATE … FROM, one trigger call)."""
    f.write(
        ("deviceclasses", f.device_class("gpu.example.com")),
        *[
            ("resourceslices", f.resource_slice(f"s{n}", pool=f"node-{n}", node=f"node-{n}",
                                                devices=[f.gpu(f"gpu-{i}") for i in range(120)]))
            for n in range(3)
        ],
    )  # fmt: skip
    assert_counters_agree()
    rule = f.taint_rule("all", selector={"driver": "gpu.example.com"}, effect="NoExecute")
    f.write(("devicetaintrules", rule))
    assert Device.objects.filter(taint_no_execute=True).count() == 360
    assert_counters_agree()
    assert overview_totals()["no_execute"] == 360
    f.delete("devicetaintrules", rule)
    assert_counters_agree()
    assert overview_totals()["tainted"] == 0


def test_a_failed_page_of_device_writes_is_counted_and_leaves_no_pause() -> None:
    """The recount (SQLite) runs even when the writes inside it fail: when the mirror's transaction carries
    on, the rows written before the failure are counted and no pause is left behind to hide the next writes
    from the counters."""
    from django.db import connection, transaction

    from inventory.models import DeviceCountPause

    if connection.vendor != "sqlite":
        pytest.skip("the triggers pause on SQLite only (PostgreSQL counts per statement)")
    f.write(
        (
            "resourceslices",
            f.resource_slice("s0", node="node-0", devices=[f.gpu(f"gpu-{i}") for i in range(4)]),
        )
    )
    ids = list(Device.objects.values_list("pk", flat=True))
    with transaction.atomic():
        with pytest.raises(RuntimeError), counts.recounted(ids, rows=10_000):
            Device.objects.filter(pk=ids[0]).update(allocation_state="allocated")
            raise RuntimeError("the page failed")
        assert not DeviceCountPause.objects.exists()
        Device.objects.filter(pk=ids[1]).update(tainted=True)  # the triggers count this one again
        Device.objects.filter(pk=ids[2]).delete()
    assert Device.objects.get(pk=ids[0]).allocation_state == "allocated"  # written before the failure
    assert_counters_agree()
