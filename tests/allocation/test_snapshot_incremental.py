"""The what-if snapshot follows the mirror incrementally: a change re-reads only what changed."""

from __future__ import annotations

import pytest

from allocation.snapshot import snapshot_load
from inventory.mirror.writer import BatchWriter, Event
from inventory.models import KubeObject
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db


def test_it_rereads_only_the_objects_that_changed() -> None:
    o.store(*o.small_cluster().values())
    first = snapshot_load()
    claim = o.claim("late")
    BatchWriter().apply([Event("resourceclaims", "ADDED", claim, "7")])

    second = snapshot_load()

    assert "late" in [c["metadata"]["name"] for c in second.claims]
    # The slices were not read again: the very same decoded objects.
    assert [id(s) for s in second.slices] == [id(s) for s in first.slices]


def test_it_sees_an_update_and_a_deletion() -> None:
    o.store(*o.small_cluster().values(), o.claim("late"))
    snapshot_load()
    row = KubeObject.objects.get(kind="resourceclaims", name="late")
    BatchWriter().apply([Event("resourceclaims", "DELETED", row.raw, "8")])
    relabelled = {
        **o.node("node-b"),
        "metadata": {
            **o.node("node-b")["metadata"],
            "uid": KubeObject.objects.get(kind="nodes", name="node-b").uid,
        },
    }
    relabelled["metadata"]["labels"] = {"zone": "z9"}
    BatchWriter().apply([Event("nodes", "MODIFIED", relabelled, "9")])

    snapshot = snapshot_load()

    assert "late" not in [c["metadata"]["name"] for c in snapshot.claims]
    node_b = snapshot.find("Node", "", "node-b")
    assert node_b is not None and node_b["metadata"]["labels"] == {"zone": "z9"}
    assert [n["metadata"]["name"] for n in snapshot.nodes] == ["node-a", "node-b"]
