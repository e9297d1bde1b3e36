"""Legacy DeviceTaintRule selectors compiled against the mirrored inventory (the database)."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from dra.upgrade import LegacyTaintSelector, load_documents
from migration.upgrade import MirroredInventory, manifests_upgrade

pytestmark = pytest.mark.django_db


def rule(selector: str, name: str = "fw") -> str:
    body = textwrap.indent(textwrap.dedent(selector).strip("\n"), "    ")
    return (
        "apiVersion: resource.k8s.io/v1alpha3\n"
        "kind: DeviceTaintRule\n"
        f"metadata:\n  name: {name}\n"
        f"spec:\n  deviceSelector:\n{body}\n"
        '  taint: {key: example.com/fw, value: "2.4", effect: NoSchedule}\n'
    )


def selectors(text: str) -> list[Any]:
    return [doc["spec"]["deviceSelector"] for doc in load_documents(text)]


def test_it_compiles_a_class_selector_into_one_rule_per_fully_selected_pool(inventory: None) -> None:
    result = manifests_upgrade(text=rule("deviceClassName: gpu.example.com"))
    assert not result.failed, result.messages()
    assert selectors(result.text) == [
        {"driver": "gpu.example.com", "pool": "node-1"},
        {"driver": "gpu.example.com", "pool": "node-2"},
    ]


def test_it_evaluates_cel_selectors_on_each_device_like_a_class_selector(inventory: None) -> None:
    text = rule(
        """\
        deviceClassName: gpu.example.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model == "H100" && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0'}
        """
    )
    result = manifests_upgrade(text=text)
    assert not result.failed, result.messages()
    assert selectors(result.text) == [
        {"driver": "gpu.example.com", "pool": "node-1"},
        {"driver": "gpu.example.com", "pool": "node-2", "device": "gpu-0"},
    ]
    (doc,) = result.documents
    assert any("3 devices" in note and "mirrored inventory at" in note for note in doc.notes)


def test_it_keeps_the_driver_pool_and_device_fields_of_the_old_selector(inventory: None) -> None:
    text = rule("driver: gpu.example.com\npool: node-2\nselectors:\n- cel: {expression: 'true'}\n")
    assert selectors(manifests_upgrade(text=text).text) == [{"driver": "gpu.example.com", "pool": "node-2"}]
    text = rule("device: gpu-1\nselectors:\n- cel: {expression: 'true'}\n")
    assert selectors(manifests_upgrade(text=text).text) == [
        {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"},
        {"driver": "gpu.example.com", "pool": "node-2", "device": "gpu-1"},
    ]


def test_it_names_an_unknown_device_class(inventory: None) -> None:
    result = manifests_upgrade(text=rule("deviceClassName: tpu.example.com"), source="r.yaml")
    assert result.messages() == [
        "r.yaml: document 1 (DeviceTaintRule fw): spec.deviceSelector.deviceClassName: cannot compile against "
        "the inventory: device class 'tpu.example.com' is not in the mirrored inventory"
    ]


def test_it_names_a_cel_expression_that_does_not_compile(inventory: None) -> None:
    result = manifests_upgrade(text=rule("selectors:\n- cel: {expression: 'device.driver =='}\n"))
    (message,) = result.messages()
    assert "selectors[0].cel.expression does not compile" in message


def test_it_refuses_legacy_selectors_when_the_database_has_no_devices(db: None) -> None:
    result = manifests_upgrade(text=rule("deviceClassName: gpu.example.com"))
    (message,) = result.messages()
    assert "there is none (the database has no devices, or --no-inventory was given)" in message
    assert result.text == rule("deviceClassName: gpu.example.com")


def test_it_refuses_legacy_selectors_when_told_not_to_use_the_inventory(inventory: None) -> None:
    result = manifests_upgrade(text=rule("deviceClassName: gpu.example.com"), use_inventory=False)
    assert result.failed


def test_it_reads_the_inventory_at_its_clock(inventory: None) -> None:
    from datetime import UTC, datetime

    clock = lambda: datetime(2026, 11, 2, 9, 30, tzinfo=UTC)  # noqa: E731
    selection = MirroredInventory(clock=clock).compile_selector(LegacyTaintSelector(driver="nic.example.com"))
    assert selection.as_of == "2026-11-02T09:30:00Z"
    assert selection.selectors == ({"driver": "nic.example.com", "pool": "node-2"},)
    assert selection.device_count == 1
