"""DeviceClasses: CEL selectors, extended resource names, per-class counts (dra-api.md §3)."""

from __future__ import annotations

import pytest

from inventory.selectors.classes import class_overview
from inventory.selectors.devices import device_list
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_it_reports_extended_resource_names_and_resolves_conflicts_newest_first_then_by_name() -> None:
    f.write(
        (
            "deviceclasses",
            f.device_class("gpu-old", extended="example.com/gpu", created="2026-11-01T10:00:00Z"),
        ),
        (
            "deviceclasses",
            f.device_class("gpu-new", extended="example.com/gpu", created="2026-11-02T10:00:00Z"),
        ),
        (
            "deviceclasses",
            f.device_class("tie-b", extended="example.com/tie", created="2026-11-01T10:00:00Z"),
        ),
        (
            "deviceclasses",
            f.device_class("tie-a", extended="example.com/tie", created="2026-11-01T10:00:00Z"),
        ),
    )

    overview = class_overview()
    served = {c.name: c.extended_resource_names for c in overview.classes}

    assert served["gpu-new"] == ["deviceclass.resource.kubernetes.io/gpu-new", "example.com/gpu"]
    assert served["gpu-old"] == ["deviceclass.resource.kubernetes.io/gpu-old"]
    assert "example.com/tie" in served["tie-a"] and "example.com/tie" not in served["tie-b"]
    assert len(overview.warnings) == 2
    assert any("gpu-new wins" in w and "gpu-old" in w for w in overview.warnings)


def test_it_matches_devices_to_classes_with_cel_selectors() -> None:
    f.write(
        (
            "deviceclasses",
            f.device_class("h100", expression='device.attributes["gpu.example.com"].model == "H100"'),
        ),
        ("deviceclasses", f.device_class("gpu.example.com")),
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1", model="A100")])),
    )

    assert f.device("gpu-0").classes == ["gpu.example.com", "h100"]
    assert f.device("gpu-1").classes == ["gpu.example.com"]
    assert device_list(filters={"device_class": "h100"}).count() == 1


def test_it_does_not_short_circuit_a_driver_test_that_an_or_can_override() -> None:
    expression = (
        'device.driver == "nic.example.com" && false || device.attributes["gpu.example.com"].model == "A100"'
    )
    f.write(
        ("deviceclasses", f.device_class("odd", expression=expression)),
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1", model="A100")])),
    )

    assert (f.device("gpu-0").classes, f.device("gpu-1").classes) == ([], ["odd"])


def test_it_reevaluates_classes_when_a_class_changes() -> None:
    cls = f.device_class("h100", expression='device.attributes["gpu.example.com"].model == "H100"')
    f.write(("deviceclasses", cls), ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])))
    cls["metadata"]["resourceVersion"] = "2"
    cls["spec"]["selectors"][0]["cel"]["expression"] = 'device.attributes["gpu.example.com"].model == "A100"'

    f.write(("deviceclasses", cls))

    assert f.device("gpu-0").classes == []


def test_it_counts_devices_blocked_by_exhausted_counters_as_not_free() -> None:
    f.partitionable_pool()
    f.write(("resourceclaims", f.claim("mig", results=[f.result("gpu-0-mig-0"), f.result("gpu-0-mig-1")])))

    summary = class_overview().classes[0]

    assert (summary.total, summary.allocated, summary.blocked_by_counters, summary.free) == (3, 2, 1, 0)
