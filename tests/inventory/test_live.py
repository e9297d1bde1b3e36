"""The live socket: current state on connect, one coalesced push per burst, for both channel layers."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.db import transaction

from dradash.channel_layer import redis_channel_layer
from dradash.realtime import broadcast
from inventory.consumers import INVENTORY_GROUP, InventoryConsumer
from inventory.models import WatchState
from inventory.selectors.objects import live_version

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_TEST_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/7"


def _redis_reachable(url: str) -> bool:
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.exceptions.RedisError:
        return False
    return True


@pytest.fixture(params=["memory", "redis"])
def layer(request: pytest.FixtureRequest, settings: Any) -> str:
    if request.param == "redis":
        if not _redis_reachable(REDIS_TEST_URL):
            pytest.skip(f"Redis not reachable at {REDIS_TEST_URL}")
        settings.CHANNEL_LAYERS = {"default": redis_channel_layer(REDIS_TEST_URL, capacity=5000)}
    else:
        settings.CHANNEL_LAYERS = {
            "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 5000}}
        }
    return str(request.param)


@pytest.fixture
async def socket(layer: str) -> AsyncIterator[WebsocketCommunicator]:
    user = await sync_to_async(User.objects.create_user)(username="ada", password="pw-for-tests-1")
    communicator = WebsocketCommunicator(InventoryConsumer.as_asgi(), "/ws/inventory/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    yield communicator
    await communicator.disconnect()


async def _messages_until(
    communicator: WebsocketCommunicator, done: Any, *, deadline_s: float = 5.0
) -> list[dict[str, Any]]:
    """Collect messages until done(messages) or the deadline (polling with receive_nothing)."""
    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline and not done(messages):
        if not await communicator.receive_nothing(timeout=0.05, interval=0.01):
            messages.append(await communicator.receive_json_from())
    return messages


async def test_it_sends_the_current_version_as_soon_as_a_page_connects(socket: WebsocketCommunicator) -> None:
    hello = await socket.receive_json_from()
    assert hello == {"type": "hello", "version": await sync_to_async(live_version)()}


async def test_it_tells_the_page_which_kinds_changed(socket: WebsocketCommunicator) -> None:
    await socket.receive_json_from()  # hello
    await get_channel_layer().group_send(
        INVENTORY_GROUP,
        {"type": "inventory.changed", "kinds": ["devicetaintrules"], "changes": [], "rv": "42"},
    )
    messages = await _messages_until(socket, lambda m: bool(m))
    assert messages[0]["type"] == "changed"
    assert messages[0]["kinds"] == ["devicetaintrules"] and messages[0]["rv"] == "42"


async def test_it_coalesces_a_burst_of_batches_into_few_pushes(
    socket: WebsocketCommunicator, settings: Any
) -> None:
    settings.DRADASH_LIVE_COALESCE_MS = 1000
    await socket.receive_json_from()
    layer = get_channel_layer()
    kinds = [f"kind{i}" for i in range(40)]
    for kind in kinds:
        await layer.group_send(INVENTORY_GROUP, {"type": "inventory.changed", "kinds": [kind], "rv": kind})

    def seen_all(messages: list[dict[str, Any]]) -> bool:
        return {k for m in messages for k in m["kinds"]} >= set(kinds)

    messages = await _messages_until(socket, seen_all)
    assert seen_all(messages)
    assert len(messages) <= 3, f"40 batches should be coalesced, got {len(messages)} pushes"
    assert messages[-1]["rv"] == "kind39"


async def test_it_asks_for_a_full_refresh_when_a_batch_does_not_name_its_kinds(
    socket: WebsocketCommunicator,
) -> None:
    await socket.receive_json_from()
    await get_channel_layer().group_send(INVENTORY_GROUP, {"type": "inventory.changed", "rv": "7"})
    messages = await _messages_until(socket, lambda m: bool(m))
    assert messages[0]["kinds"] is None


async def test_it_pushes_after_the_mirror_commits_with_the_new_version(socket: WebsocketCommunicator) -> None:
    hello = await socket.receive_json_from()

    def mirror_batch() -> None:
        with transaction.atomic():
            WatchState.objects.create(kind="devicetaintrules", state="synced", resource_version="900")
            broadcast(
                INVENTORY_GROUP, {"type": "inventory.changed", "kinds": ["devicetaintrules"], "rv": "900"}
            )

    await sync_to_async(mirror_batch)()
    messages = await _messages_until(socket, lambda m: bool(m))
    assert messages[0]["kinds"] == ["devicetaintrules"]
    assert messages[0]["version"] != hello["version"]
    assert messages[0]["version"] == await sync_to_async(live_version)()


def test_it_reports_a_new_version_to_a_polling_page_after_a_change(client: Any) -> None:
    from django.urls import reverse

    client.force_login(User.objects.create_user(username="cy", password="pw-for-tests-1"))
    before = client.get(reverse("inventory:live-state")).json()["version"]
    assert client.get(reverse("inventory:live-state")).json()["version"] == before
    WatchState.objects.create(kind="resourceslices", state="synced", resource_version="5")
    assert client.get(reverse("inventory:live-state")).json()["version"] != before
