"""A live socket is closed after DRADASH_SOCKET_MAX_SECONDS with 1012 "service restart", and the page
reconnects and is told the state: channel layers forget a group's members after a day (group_expiry), so a
page left open on a wall screen for longer went on saying "live" while it heard no change. Over a real
server (uvicorn), with a lifetime of a second."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from websockets.exceptions import ConnectionClosed

from dradash.sockets import CLOSE_RECYCLED
from tests.dradash.test_database_outage_sockets import opened, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("path", ["/ws/inventory/", "/ws/maintenance-audit/"])
def test_a_socket_is_closed_for_a_reconnect_once_it_reached_its_lifetime(
    asgi_server: str, settings: Any, path: str
) -> None:
    settings.DRADASH_SOCKET_MAX_SECONDS = 1
    cookie = session_cookie()
    started = time.monotonic()
    ws = opened(asgi_server, path, cookie)
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            ws.recv(timeout=15)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_RECYCLED
    assert time.monotonic() - started >= 0.9  # not before its lifetime (1 s, less up to a tenth)
    opened(asgi_server, path, cookie).close()  # the page's reconnect is served


def test_a_socket_within_its_lifetime_stays_open_and_hears_changes(asgi_server: str, settings: Any) -> None:
    settings.DRADASH_SOCKET_MAX_SECONDS = 3600
    ws = opened(asgi_server, "/ws/inventory/", session_cookie())
    time.sleep(1.5)
    event = {"type": "inventory.changed", "kinds": ["resourceslices"], "changes": []}
    async_to_sync(get_channel_layer().group_send)("inventory", event)
    assert json.loads(ws.recv(timeout=15))["type"] == "changed"
    ws.close()
