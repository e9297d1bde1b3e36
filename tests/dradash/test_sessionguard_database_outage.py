"""A live socket whose session is checked while the database does not answer (a PostgreSQL restart, a
failover, a cut): the check is made again at the next tick, so a session that expired meanwhile still
closes the socket with 4401. Ended by the first error, the socket outlived its session, unchecked.
Over a real PostgreSQL behind a TCP cut (tests/faults.py)."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.utils import timezone

from dradash import sessionguard
from dradash.sessionguard import SESSION_ENDED, SessionGuard
from tests.faults import database_through_cut

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in_session() -> str:
    client = Client()
    client.force_login(User.objects.create_user("ada"))
    return client.cookies["sessionid"].value


def expire(session_key: str) -> None:
    connection.close()  # this thread's connection went with the cut
    Session.objects.filter(session_key=session_key).update(expire_date=timezone.now() - timedelta(minutes=1))


async def until(what: str, done: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.02)


def test_a_socket_whose_session_expired_while_the_database_was_away_is_still_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = logged_in_session()
    failed_checks: list[BaseException] = []
    check = sessionguard._session_alive

    def counted(session_key: str) -> bool:
        try:
            return check(session_key)
        except Exception as exc:
            failed_checks.append(exc)
            raise

    monkeypatch.setattr(sessionguard, "_session_alive", counted)

    async def scenario(cut: Any) -> dict[str, Any]:
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
            "user": SimpleNamespace(is_authenticated=True),
        }
        guarded = asyncio.create_task(SessionGuard(consumer, check_seconds=0.05)(scope, browser.get, send))
        try:
            await until("the socket was accepted", lambda: bool(sent))
            cut.cut()
            await until("a check of the session met the cut", lambda: bool(failed_checks))
            cut.restore()
            await sync_to_async(expire)(key)
            await until("the socket was closed", lambda: bool(told))
            await asyncio.wait_for(guarded, 30)
        finally:
            guarded.cancel()
        closes = [m for m in sent if m["type"] == "websocket.close"]
        assert closes == [{"type": "websocket.close", "code": SESSION_ENDED}]
        return told[0]

    with database_through_cut() as cut:
        told = asyncio.run(scenario(cut))
    assert told == {"type": "websocket.disconnect", "code": SESSION_ENDED}
