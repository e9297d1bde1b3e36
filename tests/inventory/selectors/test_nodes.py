"""Nodes: devices grouped by NUMA node, pods on a node."""

from __future__ import annotations

import pytest

from inventory.selectors.nodes import node_detail
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_it_groups_a_nodes_devices_by_numa_node() -> None:
    f.write(
        (
            "resourceslices",
            f.resource_slice(
                "s0",
                devices=[
                    f.gpu("gpu-0", numa=0),
                    f.gpu("gpu-1", numa=1),
                    f.gpu("gpu-2", numa=0),
                    f.gpu("gpu-x"),
                ],
            ),
        ),
    )

    detail = node_detail(name="node-0")

    assert [(numa, [d.name for d in devices]) for numa, devices in detail.numa_groups] == [
        (0, ["gpu-0", "gpu-2"]),
        (1, ["gpu-1"]),
        (None, ["gpu-x"]),
    ]


def test_it_lists_the_pods_running_on_a_node() -> None:
    def pod(name: str, node: str) -> dict[str, object]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": f.meta(name, namespace="ml"),
            "spec": {"nodeName": node},
        }

    f.write(
        ("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0", numa=0)])),
        ("pods", pod("here", "node-0")),
        ("pods", pod("there", "node-1")),
    )

    assert [p.name for p in node_detail(name="node-0").pods] == ["here"]
