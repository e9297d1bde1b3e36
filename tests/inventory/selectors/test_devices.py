"""Devices: health, filters, YAML of any object."""

from __future__ import annotations

import pytest

from inventory.selectors.common import InvalidFilters
from inventory.selectors.devices import device_list
from inventory.selectors.objects import object_get, object_yaml
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_it_takes_health_from_pod_reports_and_driver_taints() -> None:
    sick = {"key": "gpu.example.com/unhealthy", "value": "xid-79", "effect": "NoExecute"}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": f.meta("p", namespace="default"),
        "spec": {"nodeName": "node-0"},
        "status": {
            "containerStatuses": [
                {
                    "name": "c",
                    "allocatedResourcesStatus": [
                        {
                            "name": "claim:c/gpu",
                            "resources": [
                                {
                                    "resourceID": "gpu.example.com/node-0/gpu-1",
                                    "health": "Unhealthy",
                                    "message": "hot",
                                }
                            ],
                        }
                    ],
                }
            ]
        },
    }
    f.write(
        (
            "resourceslices",
            f.resource_slice("s0", devices=[f.gpu("gpu-0", taints=[sick]), f.gpu("gpu-1"), f.gpu("gpu-2")]),
        )
    )
    f.write(("pods", pod))

    assert (f.device("gpu-0").health, f.device("gpu-1").health, f.device("gpu-2").health) == (
        "Unhealthy",
        "Unhealthy",
        "",
    )
    assert device_list(filters={"health": "Unhealthy"}).count() == 2
    f.delete("pods", pod)
    assert f.device("gpu-1").health == ""


def test_it_filters_devices_by_attribute_with_short_or_qualified_names() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0"), f.gpu("gpu-1", model="A100")]))
    )

    assert [d.name for d in device_list(filters={"attribute": "model=A100"})] == ["gpu-1"]
    assert [d.name for d in device_list(filters={"attribute": "gpu.example.com/model=H100"})] == ["gpu-0"]
    assert not device_list(filters={"attribute": "model=h100"}).exists()  # values match exactly


def test_it_refuses_an_unknown_filter_value_with_the_field_named() -> None:
    with pytest.raises(InvalidFilters) as error:
        device_list(filters={"taint": "Sometimes"})

    assert "taint" in error.value.errors


def test_it_renders_an_object_as_yaml_without_managed_fields() -> None:
    rule = f.taint_rule("maint", selector={})
    rule["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    f.write(("devicetaintrules", rule))

    text = object_yaml(obj=object_get(kind="devicetaintrules", name="maint"), reveal=False)

    assert "name: maint" in text and "managedFields" not in text
