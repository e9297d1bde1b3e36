"""A live socket's logout listener meets a Redis that went away (a restart, a failover, a cut): it listens
again once Redis is back, so a logout afterwards still closes the socket at once (4401). Ended by the first
error, the socket stayed open until the next session check (30 s in production; never in this test, whose
check period is an hour). Over the real Redis behind a TCP cut (tests/faults.py)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from dradash import sessionguard
from dradash.channel_layer import RedisChannelLayer, redis_channel_layer
from dradash.sessionguard import SESSION_ENDED, SessionGuard, session_group
from tests.dradash.guard_support import logged_in_session, open_guarded, until
from tests.faults import TcpCut

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_logout_after_redis_came_back_still_closes_the_socket_at_once(
    redis_url: str, redis_through_cut: tuple[TcpCut, str], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cut, url = redis_through_cut
    settings.CHANNEL_LAYERS = {"default": redis_channel_layer(url, capacity=100, socket_timeout=3)}
    monkeypatch.setattr(sessionguard, "LISTEN_RETRY", (0.2, 0.5))
    key = logged_in_session()

    async def scenario() -> dict[str, Any]:
        # an hour between session checks: only the logout listener can close the socket in this test
        socket = open_guarded(key, check_seconds=3600)
        assert socket.task is not None
        # the logout is sent the way `end_session_sockets` sends it, straight to Redis
        direct = RedisChannelLayer(**redis_channel_layer(redis_url, capacity=100)["CONFIG"])  # type: ignore[arg-type]
        try:
            await until("the socket was accepted", lambda: bool(socket.sent))
            await asyncio.sleep(0.5)  # the listener joined its session's group
            cut.cut()  # Redis goes away: the listener's connection is closed under it
            await asyncio.sleep(1.0)
            cut.restore()
            await asyncio.sleep(3.0)  # a few of its retry pauses
            await direct.group_send(session_group(key), {"type": "session.ended"})
            await until("the socket was closed", lambda: bool(socket.told), timeout=15)
            await asyncio.wait_for(socket.task, 30)
        finally:
            socket.task.cancel()
            await direct.close_pools()
        assert socket.closes == [{"type": "websocket.close", "code": SESSION_ENDED}]
        return socket.told[0]

    assert asyncio.run(scenario()) == {"type": "websocket.disconnect", "code": SESSION_ENDED}


class AwayLayer:
    """A channel layer whose Redis is away, as redis-py 8 meets it on Python 3.11: joining a group times
    out, and a cancel that lands as the command is sent is swallowed (`asyncio.wait_for`), the read then
    timing out as if nothing had happened."""

    def __init__(self) -> None:
        self.joins = 0

    async def new_channel(self) -> str:
        return "specific.guard!1"

    async def group_add(self, group: str, channel: str) -> None:
        self.joins += 1
        if self.joins > 200:
            raise asyncio.CancelledError  # a listener that never stops: let the test's thread end
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.02)
        raise TimeoutError("Timeout reading from 127.0.0.1:6379")

    async def group_discard(self, group: str, channel: str) -> None:
        raise TimeoutError("Timeout reading from 127.0.0.1:6379")

    async def receive(self, channel: str) -> dict[str, Any]:
        raise AssertionError("never joined: never receives")


def test_a_socket_whose_consumer_ended_while_redis_is_away_ends_without_waiting_for_redis(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The guard returns once its consumer did, even though its logout listener keeps failing to join
    while Redis is away and swallows the cancel: it must not listen again (for as long as Redis is away,
    the ASGI app would not return, and the server would hold the dead socket)."""
    layer = AwayLayer()
    monkeypatch.setattr(sessionguard, "get_channel_layer", lambda: layer)
    monkeypatch.setattr(sessionguard, "LISTEN_RETRY", (0.01, 0.01))
    key = logged_in_session()

    async def scenario() -> None:
        async def consumer(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await send({"type": "websocket.accept"})
            await until("the listener tried to join a few times", lambda: layer.joins >= 3)
            raise RuntimeError("the consumer's own receive failed")

        async def send(message: dict[str, Any]) -> None:
            return None

        scope = {
            "type": "websocket",
            "session": SimpleNamespace(session_key=key),
            "user": SimpleNamespace(is_authenticated=True, pk=None),
        }
        guard = SessionGuard(consumer, check_seconds=3600)
        with pytest.raises(RuntimeError, match="own receive failed"):
            await guard(scope, asyncio.Queue().get, send)
        ended.append(layer.joins)

    # in a thread of its own: a guard that never returns fails the test instead of hanging it
    ended: list[int] = []
    thread = threading.Thread(target=asyncio.run, args=(scenario(),), daemon=True)
    thread.start()
    thread.join(10)
    assert ended, f"the guard had not returned after 10 s; its listener tried to join {layer.joins} times"
    assert ended[0] < 10, f"the listener went on joining after its socket ended: {ended[0]} tries"
