"""The Devices table is declared once (inventory/tables.py): every consumer follows the column list."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from inventory import tables
from inventory.filters import DeviceFilterSet
from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db
DEVICES_JS = Path(__file__).resolve().parents[3] / "static" / "dradash" / "devices.js"


@pytest.fixture
def world() -> None:
    ecc = {"key": "gpu.example.com/ecc", "value": "x", "effect": "NoSchedule"}
    f.write(
        ("deviceclasses", f.device_class("gpu.example.com")),
        (
            "resourceslices",
            f.resource_slice("s0", devices=[f.gpu("gpu-0", numa=0), f.gpu("gpu-1", taints=[ecc])]),
        ),
        ("resourceclaims", f.claim("train", results=[f.result("gpu-0")])),
    )


@pytest.fixture
def user_client(client: Client) -> Client:
    client.force_login(make_user())
    return client


def consumers(client: Client) -> dict[str, Any]:
    """What each consumer of the column list serves for the world above."""
    data = client.get(reverse("inventory:devices-data")).json()["data"]
    csv_text = b"".join(client.get(reverse("inventory:devices-export-csv")).streaming_content).decode()
    exported = json.loads(b"".join(client.get(reverse("inventory:devices-export-json")).streaming_content))
    page = client.get(reverse("inventory:devices")).content.decode()
    spec = json.loads(
        re.search(r'id="device-table-spec" type="application/json">(.*?)</script>', page, re.S)[1]
    )
    api = APIClient()
    api.force_authenticate(make_user("api-user"))
    devices = api.get("/api/devices/").json()["results"]
    return {
        "rows": data,
        "csv": list(csv.reader(io.StringIO(csv_text))),
        "json": exported,
        "tabulator": {c["field"]: c for c in spec["columns"]},
        "api": devices,
    }


def test_it_serves_every_declared_column_to_every_consumer(world: None, user_client: Client) -> None:
    served = consumers(user_client)
    formatters = re.search(r"const FORMATTERS = \{(.*?)\};", DEVICES_JS.read_text(), re.S)[1]
    header, *lines = served["csv"]
    assert header == [c.name for c in tables.DEVICE_COLUMNS]
    assert len(lines) == 2 and all(len(line) == len(header) for line in lines)
    for column in tables.DEVICE_COLUMNS:
        assert all(column.name in row for row in served["rows"]), column.name
        assert all(column.name in row for row in served["json"]), column.name
        assert all(set(column.fields) <= set(device) for device in served["api"]), column.name
        shown = served["tabulator"][column.name]
        assert (shown["title"], shown["visible"], shown["headerSort"]) == (
            column.label,
            column.visible,
            bool(column.sort),
        )
        if column.formatter:
            assert f"{column.formatter}:" in formatters, f"devices.js has no renderer {column.formatter!r}"
        if column.filter:
            assert column.filter in DeviceFilterSet.base_filters, column.filter
        if column.sort:
            for direction in ("asc", "desc"):
                response = user_client.get(
                    reverse("inventory:devices-data"), {"sort": column.name, "dir": direction}
                )
                assert response.status_code == 200, (column.name, response.content)


def test_it_sorts_and_spells_values_the_way_the_column_says(world: None, user_client: Client) -> None:
    rows = user_client.get(reverse("inventory:devices-data"), {"sort": "allocatable", "dir": "desc"}).json()[
        "data"
    ]
    assert [(r["device"], r["allocatable"]) for r in rows] == [("gpu-1", "taint"), ("gpu-0", "in-use")]
    served = consumers(user_client)
    header, *lines = served["csv"]
    by_device = {line[header.index("device")]: dict(zip(header, line, strict=True)) for line in lines}
    assert by_device["gpu-1"]["taints"] == "gpu.example.com/ecc=x:NoSchedule"
    assert by_device["gpu-1"]["why"].startswith("untolerated taint gpu.example.com/ecc=x:NoSchedule")
    assert by_device["gpu-0"]["claims"] == "default/train"


def test_it_takes_one_entry_to_add_a_column_everywhere(
    world: None, user_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = tables.Column(
        "driverTaints",
        "Driver taints",
        ("slice_taints",),
        lambda d: len(d["slice_taints"] or []),
        sort=("slice_taints",),
        visible=False,
    )
    monkeypatch.setattr(tables, "DEVICE_COLUMNS", (*tables.DEVICE_COLUMNS, extra))
    served = consumers(user_client)
    assert sorted(row["driverTaints"] for row in served["rows"]) == [0, 1]
    assert sorted(row["driverTaints"] for row in served["json"]) == [0, 1]
    assert served["csv"][0][-1] == "driverTaints"
    assert served["tabulator"]["driverTaints"]["title"] == "Driver taints"
    assert all("slice_taints" in device for device in served["api"])
    assert user_client.get(reverse("inventory:devices-data"), {"sort": "driverTaints"}).status_code == 200


def test_the_exports_follow_the_tables_sort_and_filters(world: None, user_client: Client) -> None:
    view = {"sort": "device", "dir": "desc"}
    shown = [r["device"] for r in user_client.get(reverse("inventory:devices-data"), view).json()["data"]]
    assert shown == ["gpu-1", "gpu-0"]
    response = user_client.get(reverse("inventory:devices-export-csv"), view)
    header, *lines = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [line[header.index("device")] for line in lines] == shown
    response = user_client.get(reverse("inventory:devices-export-json"), view)
    assert [r["device"] for r in json.loads(b"".join(response.streaming_content))] == shown
    filtered = user_client.get(reverse("inventory:devices-export-json"), {**view, "taint": "any"})
    assert [r["device"] for r in json.loads(b"".join(filtered.streaming_content))] == ["gpu-1"]
    # The page's export links carry the sort it was opened with (devices.js keeps them current).
    page = user_client.get(reverse("inventory:devices"), view).content.decode()
    assert re.search(r'id="export-csv" href="[^"]*\?sort=device&amp;dir=desc"', page)
    bad = user_client.get(reverse("inventory:devices-export-csv"), {"sort": "bogus"})
    assert bad.status_code == 400 and "sort must be one of" in bad.content.decode()


def test_the_devices_table_marks_sort_state_like_every_other_table() -> None:
    """Tabulator's own arrow shows ▲ on every sortable column, sorted or not; the Devices table uses the
    marks of the other tables' sort buttons instead: ↕ sortable, ▲ ascending, ▼ descending."""
    css = (DEVICES_JS.parent / "dradash.css").read_text()
    marks = {
        "none": re.search(r'\.th-sort::after \{ content: "(.)"', css)[1],
        "asc": re.search(r'th\[aria-sort="ascending"\] \.th-sort::after \{ content: "(.)"', css)[1],
        "desc": re.search(r'th\[aria-sort="descending"\] \.th-sort::after \{ content: "(.)"', css)[1],
    }
    assert marks == {"none": "↕", "asc": "▲", "desc": "▼"}
    js = DEVICES_JS.read_text()
    # the mark is Tabulator's sort icon, in a span hidden from screen readers (aria-sort says the sort)
    assert re.search(
        r"headerSortElement: function \(column, dir\) \{\s*"
        r'const mark = el\("span", null, SORT_MARKS\[dir\] \|\| SORT_MARKS\.none\);\s*'
        r'mark\.setAttribute\("aria-hidden", "true"\);\s*return mark;',
        js,
    )
    declared = re.search(r"const SORT_MARKS = \{ none: \"(.)\", asc: \"(.)\", desc: \"(.)\" \};", js)
    assert declared and dict(zip(("none", "asc", "desc"), declared.groups(), strict=True)) == marks
