"""Nodes are listed once each, however many devices they hold, and a page reads only its own nodes."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.selectors.nodes import node_list, node_names
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def _two_nodes() -> None:
    f.write(
        *[
            (
                "resourceslices",
                f.resource_slice(
                    f"s{n}", pool=f"node-{n}", node=f"node-{n}", devices=[f.gpu(f"gpu-{i}") for i in range(4)]
                ),
            )
            for n in range(3)
        ],
        ("resourceclaims", f.claim("c0", results=[f.result("gpu-1", pool="node-1")])),
    )


def test_it_names_each_node_once_however_many_devices_it_has() -> None:
    _two_nodes()
    assert list(node_names()) == ["node-0", "node-1", "node-2"]
    assert len(node_list()) == 3


def test_it_counts_the_devices_of_the_nodes_of_one_page() -> None:
    _two_nodes()
    page = node_list()[1:2]
    assert [(n.name, n.device_count, n.allocated, n.tainted) for n in page] == [("node-1", 4, 1, 0)]
    assert [n.name for n in node_list()] == ["node-0", "node-1", "node-2"]


def test_it_reads_node_names_without_one_row_per_device() -> None:
    _two_nodes()
    with CaptureQueriesContext(connection) as captured:
        names = node_names()
        assert len(names) == 3 and names[1:3] == ["node-1", "node-2"]
    assert captured.captured_queries
    # From the Node objects and the device counters, never one row per device.
    assert all('"inventory_device"' not in q["sql"] for q in captured.captured_queries)


def test_it_pages_nodes_with_devices_and_node_objects_once_each_and_filters_them() -> None:
    _two_nodes()
    f.write(("nodes", f.node("node-1")), ("nodes", f.node("node-9")))  # one with devices, one without
    names = node_names()
    assert list(names) == ["node-0", "node-1", "node-2", "node-9"] and len(names) == 4
    assert names[3] == "node-9" and names[-1:] == ["node-9"] and names[2:] == ["node-2", "node-9"]
    assert list(node_names(q="DE-9")) == ["node-9"] and len(node_names(q="nothing")) == 0
    with pytest.raises(IndexError):
        names[4]
