"""A live socket whose push meets a database that does not answer (a PostgreSQL restart, a failover) is
closed with 1013 "try again later", so the page says it is not live and reconnects — then the page is
told the current state. Without that the change was dropped with the failed read and the socket stayed
open: the page said "live" while it showed what the database held before. Over a real server (uvicorn)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from dradash.sockets import CLOSE_TRY_AGAIN
from tests.faults import database_through_cut
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def session_cookie() -> str:
    client = Client()
    client.force_login(make_user("ada", role="operator"))
    return f"sessionid={client.cookies['sessionid'].value}"


def opened(server: str, path: str, cookie: str) -> ClientConnection:
    ws = connect(
        server.replace("http://", "ws://") + path,
        additional_headers={"Cookie": cookie, "Origin": server},
        open_timeout=20,
    )
    json.loads(ws.recv(timeout=20))  # the state on connect
    return ws


def cut_during_a_push(server: str, path: str, group: str, event: dict[str, Any]) -> None:
    cookie = session_cookie()
    with database_through_cut() as cut:
        ws = opened(server, path, cookie)
        cut.cut()
        async_to_sync(get_channel_layer().group_send)(group, event)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=20)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_TRY_AGAIN
        cut.restore()
        opened(server, path, cookie).close()  # the page's reconnect, once the database is back


def test_the_inventory_pages_socket_closes_when_a_change_cannot_be_read_so_the_page_stops_saying_live(
    asgi_server: str,
) -> None:
    event = {"type": "inventory.changed", "kinds": ["resourceslices"], "changes": []}
    cut_during_a_push(asgi_server, "/ws/inventory/", "inventory", event)


def test_the_audit_socket_closes_when_a_new_entry_cannot_be_read_so_the_page_stops_saying_live(
    asgi_server: str,
) -> None:
    cut_during_a_push(asgi_server, "/ws/maintenance-audit/", "maintenance-audit", {"type": "audit.changed"})


def test_a_maintenance_pages_socket_closes_when_its_progress_cannot_be_read_so_it_shows_reconnecting(
    asgi_server: str,
) -> None:
    from tests.maintenance.test_progress import world

    m = world()
    event = {"type": "maintenance.changed"}
    cut_during_a_push(asgi_server, f"/ws/maintenance/{m.id}/", f"maintenance-{m.id}", event)
