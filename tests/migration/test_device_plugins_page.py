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
