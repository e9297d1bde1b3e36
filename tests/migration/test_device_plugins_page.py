"""The Device plugins → DRA page as a screen reader reads it: every column of a resource's Pods table has a
header (the fifth, which says a pod moves to DRA, had none), and each resource's "Remove the … device plugin
from" field is named by its visible label, which names the resource, instead of one aria-label "nodes" that
hid the label and repeated for every resource listed."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from tests.inventory import factories as f
from tests.migration.test_device_plugins import pod

pytestmark = pytest.mark.django_db


def plugin_node(name: str, resource: str) -> dict[str, Any]:
    return {**f.node(name), "status": {"allocatable": {"cpu": "8", "pods": "110", resource: "2"}}}


@pytest.fixture
def two_resources(db: Any) -> None:
    """Nodes whose device plugins advertise example.com/gpu and example.com/fpga, a pod asking for each."""
    fpga = pod("synth", 1, "fpga-0")
    fpga["spec"]["containers"][0]["resources"]["limits"] = {"example.com/fpga": "1"}
    f.write(
        ("nodes", plugin_node("gpu-0", "example.com/gpu")),
        ("nodes", plugin_node("fpga-0", "example.com/fpga")),
        ("pods", {**pod("train", 1, "gpu-0"), "metadata": f.meta("train", namespace="default")}),
        ("pods", {**fpga, "metadata": f.meta("synth", namespace="default")}),
    )


def sections(page: str) -> dict[str, str]:
    return dict(
        re.findall(r'<section class="panel resource"[^>]*data-resource="([^"]+)">(.*?)</section>', page, re.S)
    )


def test_every_pods_column_has_a_header(two_resources: None, viewer_client: Client) -> None:
    page = viewer_client.get("/migration/device-plugins/").content.decode()

    for name, section in sections(page).items():
        pods = section.split('<table class="t pods">')[1].split("</thead>")[0]
        headers = re.findall(r"<th>(.*?)</th>", pods)
        assert headers == ["Pod", "asks", "node", "served by", "without the plugin"], name


def test_each_resources_removal_field_is_named_by_its_visible_label(
    two_resources: None, viewer_client: Client
) -> None:
    page = viewer_client.get("/migration/device-plugins/").content.decode()

    found = sections(page)
    assert sorted(found) == ["example.com/fpga", "example.com/gpu"]
    ids = set()
    for name, section in found.items():
        field = re.search(r'<input name="nodes"[^>]*>', section)
        assert field and "aria-label" not in field.group(0)
        ids.add(field_id := re.search(r'id="([^"]+)"', field.group(0))[1])
        label = re.search(rf'<label for="{field_id}">(.*?)</label>', section, re.S)
        assert label, f"the {name} field has no label"
        assert re.sub(r"<[^>]+>", "", label[1]) == f"Remove the {name} device plugin from"
    assert len(ids) == 2  # one field per resource, each its own


def text_of(section: str, element_id: str) -> str:
    found = re.search(rf'<(\w+)[^>]*\bid="{element_id}"[^>]*>(.*?)</\1>', section, re.S)
    assert found, f"no element {element_id}"
    return " ".join(re.sub(r"<[^>]+>", "", found.group(2)).split())


def test_each_class_picker_is_named_by_the_words_beside_it(
    two_resources: None, viewer_client: Client
) -> None:
    """ "and give [class] extendedResourceName <resource>": the picker's name is those visible words (an
    aria-label "DeviceClass that gets extendedResourceName" replaced them and was the same for every
    resource)."""
    page = viewer_client.get("/migration/device-plugins/").content.decode()

    names = set()
    for resource, section in sections(page).items():
        picker = re.search(r'<select name="deviceClassName"[^>]*>', section)
        assert picker and "aria-label=" not in picker.group(0)
        labelled_by = re.search(r'aria-labelledby="([^"]+)"', picker.group(0))
        assert labelled_by, f"the {resource} class picker has no name"
        name = " ".join(text_of(section, part) for part in labelled_by[1].split())
        assert name == f"and give extendedResourceName {resource}"
        names.add(name)
    assert len(names) == 2


def test_the_table_of_classes_contesting_a_name_heads_every_column(viewer_client: Client) -> None:
    f.write(
        ("deviceclasses", f.device_class("a-gpu", extended="example.com/gpu")),
        ("deviceclasses", f.device_class("b-gpu", extended="example.com/gpu")),
        ("nodes", plugin_node("gpu-0", "example.com/gpu")),
    )
    page = viewer_client.get("/migration/device-plugins/").content.decode()

    conflict = page.split('class="alert warn conflict"')[1].split("</thead>")[0]
    assert re.findall(r"<th>(.*?)</th>", conflict) == ["DeviceClass", "created", "outcome"]
