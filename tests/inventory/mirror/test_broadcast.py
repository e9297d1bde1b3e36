"""After each applied batch the mirror sends ONE `inventory.changed` message, after commit."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from inventory.mirror import writer as mirror
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def test_it_broadcasts_one_message_per_batch_naming_what_changed(
    django_capture_on_commit_callbacks: Any,
) -> None:
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)("inventory", channel)
    rule = f.taint_rule("maint", selector={})
    slice_obj = f.resource_slice("s0", devices=[f.gpu("gpu-0")])

    with django_capture_on_commit_callbacks(execute=True):
        f.write(("resourceslices", slice_obj), ("devicetaintrules", rule))
    message = async_to_sync(layer.receive)(channel)

    assert message["type"] == "inventory.changed"
    assert message["kinds"] == ["devicetaintrules", "resourceslices"]
    assert {(c["kind"], c["name"], c["uid"]) for c in message["changes"]} == {
        ("resourceslices", "s0", slice_obj["metadata"]["uid"]),
        ("devicetaintrules", "maint", rule["metadata"]["uid"]),
    }
    assert message["rv"] == {"resourceslices": "1", "devicetaintrules": "1"}


def test_it_sends_nothing_before_the_transaction_commits(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(mirror, "broadcast", lambda group, event: sent.append(event))

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])))
        f.write(("resourceslices", f.resource_slice("s1", pool="node-1", devices=[f.gpu("gpu-0")])))

    assert len(sent) == 2  # one per batch, not one per object
    # mirror.broadcast (patched here) defers to on_commit itself; what remains queued is one
    # mirror_batch_committed announcement per batch, which runs only once the transaction commits (beside
    # the writer's note of the resourceVersions committed, `BatchWriter.lost_commits`).
    announcements = [c for c in callbacks if "_on_commit_rv" not in c.__qualname__]
    assert len(announcements) == 2


def test_it_names_deleted_objects_in_the_message(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(mirror, "broadcast", lambda group, event: sent.append(event))
    rule = f.taint_rule("maint", selector={})
    f.write(("devicetaintrules", rule))

    f.delete("devicetaintrules", rule)

    # (a taint recompute of the selected devices follows as its own message, naming no objects)
    assert [m for m in sent if m["changes"]][-1]["changes"] == [
        {
            "kind": "devicetaintrules",
            "type": "DELETED",
            "uid": rule["metadata"]["uid"],
            "name": "maint",
            "namespace": "",
        }
    ]
