"""A socket behind the SessionGuard with no server around it, for the outage tests: the consumer accepts
and waits to be told the socket is gone; the browser sends nothing."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from dradash.sessionguard import SessionGuard


def logged_in_session() -> str:
    client = Client()
    client.force_login(User.objects.create_user("ada"))
    return client.cookies["sessionid"].value


async def until(what: str, done: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.02)


@dataclass
class GuardedSocket:
    sent: list[dict[str, Any]] = field(default_factory=list)  # what the guard sent the browser
    told: list[dict[str, Any]] = field(default_factory=list)  # what the consumer was told
    task: asyncio.Task[None] | None = None

    @property
    def closes(self) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["type"] == "websocket.close"]


def open_guarded(session_key: str, *, check_seconds: float) -> GuardedSocket:
    """Start the guard around an accepting consumer (in the running event loop)."""
    socket = GuardedSocket()

    async def consumer(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "websocket.accept"})
        socket.told.append(await receive())

    async def send(message: dict[str, Any]) -> None:
        socket.sent.append(message)

    browser: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    scope = {
        "type": "websocket",
        "session": SimpleNamespace(session_key=session_key),
        "user": SimpleNamespace(is_authenticated=True, pk=None),
    }
    guard = SessionGuard(consumer, check_seconds=check_seconds)
    socket.task = asyncio.create_task(guard(scope, browser.get, send))
    return socket
