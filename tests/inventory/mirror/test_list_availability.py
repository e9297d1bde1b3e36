"""A list's pages of slices write each device row with its availability (claims, classes, rules and
nodes are listed before slices): no UPDATE of the device rows afterwards, nothing left deferred, and the
same numbers as recomputing the pools later gives."""

from __future__ import annotations

import gc
from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.mirror.derive.availability import recompute_availability
from inventory.mirror.derive.context import Context
from inventory.mirror.reflector import INITIAL
from inventory.mirror.writer import BatchWriter
from inventory.models import ClassAvailability, Device
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def listed(writer: BatchWriter, kind: str, *pages: list[dict[str, object]]) -> None:
    writer.begin_list(kind, reason=INITIAL)
    for items in pages:
        writer.write_page(kind, items)
    writer.finish_list(kind, "100")


def two_gpu_slices(count: int) -> list[dict[str, object]]:
    """One slice a node, node-0 … node-<count - 1>, of two GPUs each."""
    return [
        f.resource_slice(
            f"s{i}", pool=f"node-{i}", node=f"node-{i}", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")]
        )
        for i in range(count)
    ]


def numbers() -> tuple[list[tuple[str, str, int, int]], list[tuple[str, str, str, str]]]:
    classes = sorted(ClassAvailability.objects.values_list("pool", "device_class", "free", "headroom"))
    devices = sorted(Device.objects.values_list("pool", "name", "blocked", "blocked_reason"))
    return classes, devices


def test_a_listed_page_of_slices_writes_the_devices_with_their_availability() -> None:
    writer = BatchWriter()
    listed(writer, "deviceclasses", [f.device_class("gpu.example.com")])
    listed(
        writer, "devicetaintrules", [f.taint_rule("drain", selector={"pool": "node-1", "device": "gpu-1"})]
    )
    listed(writer, "resourceclaims", [f.claim("c0", results=[f.result("gpu-0", pool="node-0")])])
    slices = two_gpu_slices(3)
    writer.begin_list("resourceslices", reason=INITIAL)
    with CaptureQueriesContext(connection) as captured:
        writer.write_page("resourceslices", slices[:2])
        writer.write_page("resourceslices", slices[2:])
        writer.finish_list("resourceslices", "100")
        assert not writer.has_deferred  # nothing left to recompute after the list
        while writer.refresh_deferred():
            pass

    updates = [q["sql"] for q in captured.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    assert [u for u in updates if "inventory_device" in u.split(" SET ")[0]] == []
    classes, devices = numbers()
    assert classes == [
        ("node-0", "gpu.example.com", 1, 1),  # gpu-0 allocated
        ("node-1", "gpu.example.com", 1, 1),  # gpu-1 tainted NoSchedule
        ("node-2", "gpu.example.com", 2, 2),
    ]
    blocked = {(pool, name): reason for pool, name, reason, _message in devices if reason}
    assert set(blocked) == {("node-0", "gpu-0"), ("node-1", "gpu-1")}
    assert blocked[("node-1", "gpu-1")] == "taint"

    # Recomputing every pool afterwards (what a later change does) finds nothing to change.
    recompute_availability(["gpu.example.com/node-0", "gpu.example.com/node-1", "gpu.example.com/node-2"],
                           Context.load(writer._matchers, writer._rules))  # fmt: skip
    assert numbers() == (classes, devices)


def test_a_claim_listed_after_the_slices_still_counts() -> None:
    writer = BatchWriter()
    listed(writer, "deviceclasses", [f.device_class("gpu.example.com")])
    listed(writer, "resourceslices", [f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])])
    assert ClassAvailability.objects.get().free == 2
    listed(writer, "resourceclaims", [f.claim("c0", results=[f.result("gpu-0")])])
    while writer.refresh_deferred():
        pass
    assert ClassAvailability.objects.get().free == 1
    assert f.device("gpu-0").blocked != ""


def test_a_page_of_slices_leaves_no_garbage_for_the_cyclic_collector() -> None:
    """Each page's rows and each pool's allocator are freed as soon as the page is written: nothing the
    page made is kept alive by a reference cycle (a caught FieldError's frames holding the page's locals,
    a claim caching a plan that points back at it), which during a list would pile up until collected."""
    writer = BatchWriter()
    listed(writer, "nodes", [f.node(f"node-{i}", zone="a") for i in range(4)])
    listed(writer, "deviceclasses", [f.device_class("gpu.example.com")])
    listed(writer, "resourceclaims", [f.claim("c0", results=[f.result("gpu-0", pool="node-0")])])
    slices = two_gpu_slices(4)
    writer.begin_list("resourceslices", reason=INITIAL)
    writer.write_page("resourceslices", slices[:2])  # the first page fills the caches that live on
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        writer.write_page("resourceslices", slices[2:])
        gc.collect()
        left = Counter(type(o).__qualname__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    writer.finish_list("resourceslices", "100")
    assert left == Counter()
    assert Device.objects.filter(pool="node-3").count() == 2
