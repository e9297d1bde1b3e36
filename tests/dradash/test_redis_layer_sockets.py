"""Live sockets on the Redis channel layer (production's, the Helm chart's) stay open while nothing
happens. channels_redis waits for a socket's next message with a 5 s BZPOPMIN; redis-py 8 reads every
reply with a 5 s socket timeout by default, so an idle socket's read timed out first and the consumer
died — every live page dropped and reconnected every few seconds, and a change that came meanwhile was
not pushed. Over a real server (uvicorn) and the real Redis."""

from __future__ import annotations

import json
import os
import time

import pytest
import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.test import Client
from websockets.sync.client import connect

from dradash.env import redis_channel_layer
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_TEST_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/7"


@pytest.fixture
def redis_layer(settings: object) -> None:
    try:
        redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=1).ping()
    except redis.exceptions.RedisError:
        pytest.skip(f"Redis not reachable at {REDIS_TEST_URL}")
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer(REDIS_TEST_URL, capacity=5000)}  # type: ignore[attr-defined]


def test_an_idle_live_page_keeps_its_socket_on_the_redis_layer_and_is_told_the_next_change(
    redis_layer: None, asgi_server: str
) -> None:
    client = Client()
    client.force_login(make_user("ada"))
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    with connect(
        asgi_server.replace("http://", "ws://") + "/ws/inventory/",
        additional_headers={"Cookie": cookie, "Origin": asgi_server},
        open_timeout=20,
    ) as ws:
        assert json.loads(ws.recv(timeout=20))["type"] == "hello"
        # Nothing happens for longer than the layer's wait for a message (channels_redis: 5 s) …
        time.sleep(get_channel_layer().brpop_timeout + 3)
        # … then the mirror writes a batch: the page is told.
        event = {"type": "inventory.changed", "kinds": ["resourceslices"], "changes": []}
        async_to_sync(get_channel_layer().group_send)("inventory", event)
        changed = json.loads(ws.recv(timeout=20))
        assert changed["type"] == "changed" and changed["kinds"] == ["resourceslices"]
