"""The inventory change stream for automation: token or session auth, state on connect, kind filter."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User
from rest_framework.authtoken.models import Token

from inventory.models import WatchState
from inventory.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)


def batch(kind: str, name: str) -> dict[str, Any]:
    change = {"kind": kind, "type": "ADDED", "uid": f"uid-{name}", "name": name, "namespace": ""}
    return {"type": "inventory.changed", "kinds": [kind], "changes": [change], "count": 1, "truncated": False,
            "rv": {kind: "42"}}  # fmt: skip


async def connect(path: str, headers: list[tuple[bytes, bytes]]) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path, headers=headers)
    communicator.scope["user"] = AnonymousUser()
    await communicator.connect()
    return communicator


async def test_it_streams_changes_to_a_token_holder_after_a_hello_with_versions() -> None:
    def setup() -> str:
        WatchState.objects.create(kind="resourceslices", resource_version="41")
        return str(Token.objects.create(user=User.objects.create_user("robot", password="x")).key)

    token = await sync_to_async(setup)()
    ws = await connect(
        "/ws/api/inventory/?kinds=devicetaintrules", [(b"authorization", f"Token {token}".encode())]
    )
    hello = await ws.receive_json_from(timeout=5)
    assert hello == {"type": "hello", "resourceVersions": {"resourceslices": "41"}}

    layer = get_channel_layer()
    await layer.group_send("inventory", batch("pods", "ignored"))
    await layer.group_send("inventory", batch("devicetaintrules", "gpu-maintenance"))
    message = await ws.receive_json_from(timeout=5)
    assert message["type"] == "changes"
    assert [c["name"] for c in message["changes"]] == ["gpu-maintenance"]
    assert message["rv"] == {"devicetaintrules": "42"}
    await ws.disconnect()


async def test_it_closes_the_stream_without_credentials() -> None:
    ws = await connect("/ws/api/inventory/", [(b"authorization", b"Token not-a-token")])
    assert await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}
