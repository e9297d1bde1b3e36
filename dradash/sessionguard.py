"""Websockets end with the login session that opened them.

`SessionGuard` wraps every websocket (inside Channels' auth middleware): when the session that opened a
socket ends — the user logs out (a `session.ended` message to the group `session-<key>`, sent by
`end_session_sockets` on Django's `user_logged_out`), or the session expires or is deleted (checked
every `CHECK_SECONDS`; a check the database does not answer is made again at the next one) — the socket is closed with code 4401 and the consumer is told it disconnected,
so nothing more is streamed to a browser whose user is gone. Sockets authenticated otherwise (an API
token) are left alone. Consumers need no code for this.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer

log = logging.getLogger(__name__)

SESSION_ENDED = 4401
CHECK_SECONDS = 30.0


def session_group(session_key: str) -> str:
    return f"session-{session_key}"


def end_session_sockets(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """`user_logged_out` receiver: tell the sockets of this session to close."""
    session = getattr(request, "session", None)
    key = getattr(session, "session_key", None)
    layer = get_channel_layer()
    if not key or layer is None:
        return
    try:
        async_to_sync(layer.group_send)(session_group(key), {"type": "session.ended"})
    except Exception:  # logging out must work even if the channel layer is down
        log.exception("could not notify the websockets of a logged-out session")


def _session_alive(session_key: str) -> bool:
    from django.contrib.sessions.models import Session
    from django.db import connection
    from django.utils import timezone

    try:
        return Session.objects.filter(session_key=session_key, expire_date__gt=timezone.now()).exists()
    except Exception:
        connection.close()  # it may be broken (the database went away): the next check connects again
        raise


class SessionGuard:
    def __init__(self, app: Any, *, check_seconds: float = CHECK_SECONDS) -> None:
        self.app = app
        self.check_seconds = check_seconds

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        session = scope.get("session")
        user = scope.get("user")
        key = getattr(session, "session_key", None)
        if scope.get("type") != "websocket" or not key or not getattr(user, "is_authenticated", False):
            await self.app(scope, receive, send)
            return
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        closed = asyncio.Event()

        async def guarded_send(message: dict[str, Any]) -> None:
            if closed.is_set():
                return  # the socket is gone; the consumer has been told
            if message.get("type") == "websocket.close":
                closed.set()
            await send(message)

        async def end(reason: str) -> None:
            if closed.is_set():
                return
            closed.set()
            log.info("closing a websocket: %s", reason)
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": SESSION_ENDED})
            await inbox.put({"type": "websocket.disconnect", "code": SESSION_ENDED})

        async def pump() -> None:
            while True:
                message = await receive()
                await inbox.put(message)
                if message.get("type") == "websocket.disconnect":
                    return

        async def watch_logout() -> None:
            layer = get_channel_layer()
            if layer is None:
                return
            channel = await layer.new_channel()
            await layer.group_add(session_group(key), channel)
            try:
                while True:
                    message = await layer.receive(channel)
                    if message.get("type") == "session.ended":
                        await end("the session logged out")
                        return
            finally:
                with contextlib.suppress(Exception):
                    await layer.group_discard(session_group(key), channel)

        async def watch_expiry() -> None:
            # A check the database did not answer (a restart, a failover, a cut) is logged and made
            # again at the next tick: ended by one error, the socket outlived its session unchecked.
            while not closed.is_set():
                await asyncio.sleep(self.check_seconds)
                try:
                    alive = await sync_to_async(_session_alive, thread_sensitive=False)(key)
                except Exception as exc:
                    log.warning(
                        "could not check a websocket's session (checked again in %s s): %s: %s",
                        self.check_seconds,
                        type(exc).__name__,
                        exc,
                    )
                    continue
                if not alive:
                    await end("the session expired or was deleted")
                    return

        helpers = [asyncio.create_task(t()) for t in (pump, watch_logout, watch_expiry)]
        try:
            await self.app(scope, inbox.get, guarded_send)
        finally:
            for task in helpers:
                task.cancel()
            for task in helpers:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
