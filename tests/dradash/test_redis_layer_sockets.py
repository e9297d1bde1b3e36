"""The Redis channel layer (production's, the Helm chart's) keeps idle live pages connected and lets a
cancelled receive end. Over the real Redis.

- channels_redis waits for a socket's next message with a BZPOPMIN; redis-py 8 gives up on a reply after
  5 s by default, the same 5 s as that wait: every idle socket's consumer died, and every live page dropped
  and reconnected every few seconds, missing what changed meanwhile.
- A Redis that stops answering ends the sockets within seconds, so the pages say they are not live, instead
  of leaving them open and silent while the dashboard's data moves on.
- With a socket timeout, redis-py sends each command in `asyncio.wait_for`, which on Python 3.11 swallows
  a cancellation arriving as the send completes: the cancelled receive waited for messages for ever (a
  closed page's consumer never ended; an event loop never finished closing).
"""

from __future__ import annotations

import asyncio
import json
import random
import time

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from dradash.channel_layer import SOCKET_TIMEOUT, RedisChannelLayer, redis_channel_layer
from tests.faults import TcpCut
from tests.inventory.pages_support import make_user

#: longer than redis-py 8's default 5 s socket timeout, shorter than ours
IDLE_SECONDS = 6.5


def _session_cookie() -> str:
    client = Client()
    client.force_login(make_user("ada"))
    return f"sessionid={client.cookies['sessionid'].value}"


@pytest.mark.django_db(transaction=True)
def test_an_idle_live_page_keeps_its_socket_on_the_redis_layer_and_is_told_the_next_change(
    redis_url: str, settings: object, asgi_server: str
) -> None:
    assert IDLE_SECONDS < SOCKET_TIMEOUT
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer(redis_url, capacity=5000)}  # type: ignore[attr-defined]
    cookie = _session_cookie()
    with connect(
        asgi_server.replace("http://", "ws://") + "/ws/inventory/",
        additional_headers={"Cookie": cookie, "Origin": asgi_server},
        open_timeout=20,
    ) as ws:
        assert json.loads(ws.recv(timeout=20))["type"] == "hello"
        time.sleep(IDLE_SECONDS)  # nothing happens for a while …
        # … then the mirror writes a batch: the page is told, on the socket it opened.
        event = {"type": "inventory.changed", "kinds": ["resourceslices"], "changes": []}
        async_to_sync(get_channel_layer().group_send)("inventory", event)
        changed = json.loads(ws.recv(timeout=20))
        assert changed["type"] == "changed" and changed["kinds"] == ["resourceslices"]


@pytest.mark.django_db(transaction=True)
def test_a_live_socket_closes_within_seconds_when_redis_stops_answering(
    redis_through_cut: tuple[TcpCut, str], settings: object, asgi_server: str
) -> None:
    cut, url = redis_through_cut
    # a short read timeout, so that the test waits seconds, not minutes, on a loaded machine
    layer = redis_channel_layer(url, capacity=5000, socket_timeout=3)
    settings.CHANNEL_LAYERS = {"default": layer}  # type: ignore[attr-defined]
    with connect(
        asgi_server.replace("http://", "ws://") + "/ws/inventory/",
        additional_headers={"Cookie": _session_cookie(), "Origin": asgi_server},
        open_timeout=20,
    ) as ws:
        assert json.loads(ws.recv(timeout=20))["type"] == "hello"
        cut.freeze()  # Redis hangs: connections stay open, nothing comes back
        # The server closes the socket once the layer's reads time out (each of the socket's readers, its
        # consumer and its session guard, may wait out one); without a timeout it would wait for ever.
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=90)
        cut.restore()


def test_a_cancelled_receive_ends_even_when_the_cancel_lands_as_a_command_is_sent(redis_url: str) -> None:
    """Many receives, each cancelled at a random moment while the layer asks Redis again and again (a
    10 ms wait, so the cancel often lands on a send): every one of them ends."""

    async def scenario() -> list[int]:
        config = redis_channel_layer(redis_url, capacity=100)["CONFIG"]
        layer = RedisChannelLayer(**config)  # type: ignore[arg-type]
        layer.brpop_timeout = 0.01
        still_waiting = []
        for attempt in range(200):
            task = asyncio.ensure_future(layer.receive(await layer.new_channel()))
            await asyncio.sleep(random.uniform(0.0, 0.03))
            task.cancel()
            done, _ = await asyncio.wait([task], timeout=1.0)
            if not done:
                still_waiting.append(attempt)
                task.cancel()  # a second cancel, so the scenario itself ends
                await asyncio.wait([task], timeout=5.0)
        await layer.close_pools()
        return still_waiting

    assert asyncio.run(scenario()) == []


def test_a_read_timeout_that_would_cut_the_wait_for_a_message_short_is_refused() -> None:
    with pytest.raises(ValueError, match="socket_timeout 2 s must exceed the 2 s wait"):
        redis_channel_layer("redis://127.0.0.1:6379/7", capacity=100, socket_timeout=2)
