"""A live socket's logout listener meets a Redis that went away (a restart, a failover, a cut): it listens
again once Redis is back, so a logout afterwards still closes the socket at once (4401). Ended by the first
error, the socket stayed open until the next session check (30 s in production; never in this test, whose
check period is an hour). Over the real Redis behind a TCP cut (tests/faults.py)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.contrib.auth.models import User
from django.test import Client

from dradash import sessionguard
from dradash.channel_layer import RedisChannelLayer, redis_channel_layer
from dradash.sessionguard import SESSION_ENDED, SessionGuard, session_group
from tests.faults import TcpCut

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_TEST_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/7"


@pytest.fixture
def redis_through_cut() -> Iterator[tuple[TcpCut, str]]:
    try:
        redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=1).ping()
    except redis.exceptions.RedisError:
        pytest.skip(f"Redis not reachable at {REDIS_TEST_URL}")
    parts = urlsplit(REDIS_TEST_URL)
    cut = TcpCut(parts.hostname or "127.0.0.1", parts.port or 6379)
    try:
        yield cut, urlunsplit(parts._replace(netloc=f"127.0.0.1:{cut.port}"))
    finally:
        cut.close()


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


def test_a_logout_after_redis_came_back_still_closes_the_socket_at_once(
    redis_through_cut: tuple[TcpCut, str], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cut, url = redis_through_cut
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer(url, capacity=100, socket_timeout=3)}
    monkeypatch.setattr(sessionguard, "LISTEN_RETRY", (0.2, 0.5))
    key = logged_in_session()

    async def scenario() -> dict[str, Any]:
        sent: list[dict[str, Any]] = []
        told: list[dict[str, Any]] = []

        async def consumer(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await send({"type": "websocket.accept"})
            told.append(await receive())  # the guard tells it the socket is gone

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        browser: asyncio.Queue[dict[str, Any]] = asyncio.Queue()  # the browser sends nothing
        scope = {
            "type": "websocket",
            "session": SimpleNamespace(session_key=key),
            "user": SimpleNamespace(is_authenticated=True, pk=None),
        }
        # an hour between session checks: only the logout listener can close the socket in this test
        guarded = asyncio.create_task(SessionGuard(consumer, check_seconds=3600)(scope, browser.get, send))
        # the logout is sent the way `end_session_sockets` sends it, straight to Redis
        direct = RedisChannelLayer(**redis_channel_layer(REDIS_TEST_URL, capacity=100)["CONFIG"])  # type: ignore[arg-type]
        try:
            await until("the socket was accepted", lambda: bool(sent))
            await asyncio.sleep(0.5)  # the listener joined its session's group
            cut.cut()  # Redis goes away: the listener's connection is closed under it
            await asyncio.sleep(1.0)
            cut.restore()
            await asyncio.sleep(3.0)  # a few of its retry pauses
            await direct.group_send(session_group(key), {"type": "session.ended"})
            await until("the socket was closed", lambda: bool(told), timeout=15)
            await asyncio.wait_for(guarded, 30)
        finally:
            guarded.cancel()
            await direct.close_pools()
        closes = [m for m in sent if m["type"] == "websocket.close"]
        assert closes == [{"type": "websocket.close", "code": SESSION_ENDED}]
        return told[0]

    assert asyncio.run(scenario()) == {"type": "websocket.disconnect", "code": SESSION_ENDED}
