"""Real websockets to a real server (the `asgi_server` fixture), as a browser or a script opens them."""

from __future__ import annotations

import json
from contextlib import ExitStack

import pytest
from django.contrib.auth.models import User
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from dradash.sessionguard import SESSION_ENDED


def session_cookie(user: User) -> str:
    """The cookie of a new browser session `user` signed in with."""
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


def opened(sockets: ExitStack, server: str, path: str, headers: dict[str, str]) -> ClientConnection:
    """A socket on `path`, closed with `sockets`; its first message (the state on connect) read."""
    ws = sockets.enter_context(
        connect(
            server.replace("http://", "ws://") + path,
            additional_headers={"Origin": server, **headers},
            open_timeout=20,
        )
    )
    assert json.loads(ws.recv(timeout=20))["type"] == "hello"
    return ws


def assert_closed_for_the_user(ws: ClientConnection, *, timeout: float) -> None:
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=timeout)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == SESSION_ENDED


def assert_open(ws: ClientConnection) -> None:
    ws.send(json.dumps({"type": "ping"}))
    assert json.loads(ws.recv(timeout=20)) == {"type": "pong"}
