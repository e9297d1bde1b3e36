"""The maintenance page's socket never leaves a page showing a state that changed under it: a change
that lands while the socket connects, or while it is reading the document for a push, or a preview run
that ends before the socket listens to it, is followed by one more document."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from inventory.models import KubeObject
from maintenance import consumers
from maintenance.routing import websocket_urlpatterns
from tests.maintenance.test_progress import world

pytestmark = pytest.mark.django_db(transaction=True)


class PausedRead:
    """Stands in for the socket's read of the live document: the `at`-th read returns what it read
    only after the test let something happen in between (`meanwhile`)."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, at: int, edit: Callable[[int, dict[str, Any]], None]
    ) -> None:
        self.read = consumers._live
        self.at, self.edit, self.calls = at, edit, 0
        self.done, self.go = threading.Event(), threading.Event()
        monkeypatch.setattr(consumers, "_live", self)

    def __call__(self, maintenance_id: str, every_pod: bool = False) -> dict[str, Any] | None:
        self.calls += 1
        document = self.read(maintenance_id, every_pod)
        assert document is not None
        self.edit(self.calls, document)
        if self.calls == self.at:
            self.done.set()
            assert self.go.wait(10)
        return document

    async def meanwhile(self, happen: Callable[[], Any]) -> None:
        assert await asyncio.to_thread(self.done.wait, 10)
        await happen()
        await asyncio.sleep(0.3)  # the socket takes what happened while its read is still out
        self.go.set()


def unchanged(call: int, document: dict[str, Any]) -> None:
    pass


async def a_pod_goes_and_the_mirror_says_so() -> None:
    # Not on the thread the socket's read holds (thread_sensitive would wait for it).
    await sync_to_async(KubeObject.objects.filter(kind="pods", uid="pod-a").delete, thread_sensitive=False)()
    await get_channel_layer().group_send(
        "inventory", {"type": "inventory.changed", "kinds": ["pods"], "changes": []}
    )


async def connected(maintenance_id: str, user: Any) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns),
        f"/ws/maintenance/{maintenance_id}/",
        headers=[(b"host", b"127.0.0.1")],
    )
    communicator.scope["user"] = user
    ok, _ = await communicator.connect()
    assert ok
    return communicator


async def test_a_change_while_the_socket_connects_is_pushed(
    django_user_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = await sync_to_async(world)()
    user = await sync_to_async(django_user_model.objects.create_user)("viewer1", password="x")
    read = PausedRead(monkeypatch, at=1, edit=unchanged)
    communicator = await connected(m.id, user)
    await read.meanwhile(a_pod_goes_and_the_mirror_says_so)
    first = await communicator.receive_json_from(timeout=5)
    assert first["progress"]["counts"]["gone"] == 0  # read before the pod went
    update = await communicator.receive_json_from(timeout=5)
    assert update["progress"]["counts"]["gone"] == 1
    await communicator.disconnect()


async def test_a_change_while_a_push_is_on_its_way_is_pushed_after_it(
    django_user_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The push has read its document and is still sending it when the mirror changes a pod."""
    m = await sync_to_async(world)()
    user = await sync_to_async(django_user_model.objects.create_user)("viewer2", password="x")
    send = consumers.MaintenanceProgressConsumer.send_json
    sent = 0

    async def slow_second_send(self: Any, content: Any, close: bool = False) -> None:
        nonlocal sent
        sent += 1
        if sent == 2:  # the first push, after the connect's document
            await a_pod_goes_and_the_mirror_says_so()
            await asyncio.sleep(0.3)  # the socket takes the broadcast while this push is on its way
        await send(self, content, close)

    monkeypatch.setattr(consumers.MaintenanceProgressConsumer, "send_json", slow_second_send)
    communicator = await connected(m.id, user)
    assert (await communicator.receive_json_from(timeout=5))["progress"]["counts"]["gone"] == 0
    await get_channel_layer().group_send(f"maintenance-{m.id}", {"type": "maintenance.changed"})
    stale = await communicator.receive_json_from(timeout=5)
    assert stale["progress"]["counts"]["gone"] == 0  # read before the pod went
    update = await communicator.receive_json_from(timeout=5)
    assert update["progress"]["counts"]["gone"] == 1
    await communicator.disconnect()


async def test_a_preview_that_ends_before_the_socket_follows_it_is_pushed_ended(
    django_user_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = await sync_to_async(world)()
    user = await sync_to_async(django_user_model.objects.create_user)("viewer3", password="x")

    def preview_running_then_ended(call: int, document: dict[str, Any]) -> None:
        state = "running" if call == 1 else "succeeded"
        document["preview"] = {**document["preview"], "run": "r1", "state": state}

    async def the_run_ends() -> None:
        await get_channel_layer().group_send("whatif-r1", {"type": "whatif.progress"})

    read = PausedRead(monkeypatch, at=1, edit=preview_running_then_ended)
    communicator = await connected(m.id, user)
    await read.meanwhile(the_run_ends)
    assert (await communicator.receive_json_from(timeout=5))["progress"]["preview"]["state"] == "running"
    update = await communicator.receive_json_from(timeout=5)
    assert update["progress"]["preview"]["state"] == "succeeded"
    await communicator.disconnect()
