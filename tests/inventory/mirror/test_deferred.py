"""A rule over thousands of devices does not hold up the watch events behind it: the write loop
recomputes the devices' taints in chunks, applying queued events in between."""

from __future__ import annotations

import pytest

from inventory.mirror.writer import BatchWriter, Event
from inventory.models import Device
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_it_recomputes_taints_in_chunks_between_batches() -> None:
    slices = [
        f.resource_slice(f"s{i}", pool=f"node-{i}", devices=[f.gpu(f"gpu-{j}") for j in range(4)])
        for i in range(3)
    ]
    f.write(*[("resourceslices", s) for s in slices])
    writer = BatchWriter()
    rule = f.taint_rule("drain", selector={"driver": "gpu.example.com"})

    writer.apply([Event("devicetaintrules", "ADDED", rule, "10")], defer=True)
    assert writer.has_deferred
    assert not Device.objects.filter(tainted=True).exists()  # the rule is stored, its devices not yet

    assert writer.refresh_deferred(chunk=5) is True  # 5 of 12 done, more to come
    assert Device.objects.filter(tainted=True).count() == 5
    writer.apply([Event("resourceclaims", "ADDED", f.claim("c0"), "11")], defer=True)  # an event in between
    while writer.refresh_deferred(chunk=5):
        pass
    assert Device.objects.filter(tainted=True).count() == 12
    assert not writer.has_deferred


def test_it_finishes_the_recompute_before_returning_when_not_deferring() -> None:
    f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])))
    BatchWriter().apply([Event("devicetaintrules", "ADDED", f.taint_rule("drain", selector={}), "5")])
    assert Device.objects.filter(tainted=True).count() == 2


def test_it_recomputes_availability_after_a_rule_change_and_tells_the_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inventory.mirror import writer as mirror
    from inventory.models import ClassAvailability

    f.write(
        ("deviceclasses", f.device_class("gpu.example.com")),
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])),
    )
    sent: list[dict[str, object]] = []
    monkeypatch.setattr(mirror, "broadcast", lambda group, event: sent.append(event))
    writer = BatchWriter()
    rule = f.taint_rule("drain", selector={"device": "gpu-0"})

    writer.apply([Event("devicetaintrules", "ADDED", rule, "10")], defer=True)
    assert ClassAvailability.objects.get().free == 2  # the batch itself does not wait for it
    while writer.refresh_deferred():
        pass
    assert ClassAvailability.objects.get().free == 1
    assert f.device("gpu-0").blocked == "taint"
    assert sent[-1]["kinds"] == ["devicetaintrules", "resourceslices"]
