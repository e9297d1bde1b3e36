"""A live socket whose session is checked while the database does not answer (a PostgreSQL restart, a
failover, a cut): the check is made again at the next tick, so a session that expired meanwhile still
closes the socket with 4401. Ended by the first error, the socket outlived its session, unchecked.
Over a real PostgreSQL behind a TCP cut (tests/faults.py)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.sessions.models import Session
from django.db import connection
from django.utils import timezone

from dradash import sessionguard
from dradash.sessionguard import SESSION_ENDED
from tests.dradash.guard_support import logged_in_session, open_guarded, until
from tests.faults import database_through_cut

pytestmark = pytest.mark.django_db(transaction=True)


def expire(session_key: str) -> None:
    connection.close()  # this thread's connection went with the cut
    Session.objects.filter(session_key=session_key).update(expire_date=timezone.now() - timedelta(minutes=1))


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
        socket = open_guarded(key, check_seconds=0.05)
        assert socket.task is not None
        try:
            await until("the socket was accepted", lambda: bool(socket.sent))
            cut.cut()
            await until("a check of the session met the cut", lambda: bool(failed_checks))
            cut.restore()
            await sync_to_async(expire)(key)
            await until("the socket was closed", lambda: bool(socket.told))
            await asyncio.wait_for(socket.task, 30)
        finally:
            socket.task.cancel()
        assert socket.closes == [{"type": "websocket.close", "code": SESSION_ENDED}]
        return socket.told[0]

    with database_through_cut() as cut:
        told = asyncio.run(scenario(cut))
    assert told == {"type": "websocket.disconnect", "code": SESSION_ENDED}
