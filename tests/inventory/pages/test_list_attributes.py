"""A list-typed device attribute (DRAListTypeAttributes) reads unambiguously on the device page: each
element on its own, so ["a,b", "c"] never reads as "a,b, c" (three elements or two?)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db


def attribute_cell(html: str, name: str) -> str:
    found = re.search(rf'<td class="mono"><bdi[^>]*>{name}</bdi></td><td class="mono">(.*?)</td></tr>', html)
    assert found, f"no Attributes row for {name}"
    return found.group(1)


def test_it_shows_each_element_of_a_list_attribute_on_its_own(client: Client) -> None:
    attributes = {"labels": {"strings": ["a,b", "c"]}, "healthy": {"bools": [True, False]},
                  "model": {"string": "X1, rev 2"}}  # fmt: skip
    f.write(("resourceslices", f.resource_slice("s", devices=[{"name": "fpga-0", "attributes": attributes}])))
    client.force_login(make_user())
    html = client.get("/devices/gpu.example.com/node-0/fpga-0/").content.decode()

    labels = attribute_cell(html, "labels")
    assert re.findall(r'<span class="badge"><bdi[^>]*>([^<]*)</bdi></span>', labels) == ["a,b", "c"]
    assert 'data-list="true"' in labels and "a,b, c" not in labels
    assert 'title="[&quot;a,b&quot;, &quot;c&quot;]"' in labels  # the text form is a JSON list
    healthy = attribute_cell(html, "healthy")
    assert re.findall(r'<span class="badge"><bdi[^>]*>([^<]*)</bdi></span>', healthy) == ["true", "false"]
    assert re.fullmatch(
        r'<bdi class="k8s">X1, rev 2</bdi>', attribute_cell(html, "model").strip()
    )  # plain text


def test_the_devices_table_and_exports_keep_each_element_of_a_list_attribute(client: Client) -> None:
    import csv
    import io
    import json

    attributes = {
        "labels": {"strings": ["a,b", "c"]},
        "model": {"string": "X1, rev 2"},
        "ports": {"ints": [1, 2]},
    }
    f.write(("resourceslices", f.resource_slice("s", devices=[{"name": "fpga-0", "attributes": attributes}])))
    client.force_login(make_user())
    expected = {"labels": ["a,b", "c"], "model": "X1, rev 2", "ports": ["1", "2"]}

    (row,) = client.get("/devices/data/").json()["data"]
    assert row["attributes"] == expected  # the table's data: the Attributes column (hidden by default)
    (exported,) = json.loads(b"".join(client.get("/devices/export.json").streaming_content))
    assert exported["attributes"] == expected
    header, line = list(
        csv.reader(io.StringIO(b"".join(client.get("/devices/export.csv").streaming_content).decode()))
    )
    assert json.loads(line[header.index("attributes")]) == expected  # a JSON object: "a,b" stays one element
