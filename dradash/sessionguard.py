"""Websockets end when their user may no longer use the dashboard.

`SessionGuard` wraps every websocket (inside Channels' auth middleware): when the session that opened a
socket no longer signs its user in, the socket is closed with code 4401 and the consumer is told it
disconnected, so nothing more is streamed to a browser whose user is gone. That is when the user logs out
(a `session.ended` message to the group `session-<key>`, sent by `end_session_sockets` on Django's
`user_logged_out`); when the user is deactivated, deleted or their password changed (a `user.changed`
message to the group `user-<pk>`, sent after commit by `user_changed` on the user's post_save and
post_delete: the guard checks the session at once); and, checked every `CHECK_SECONDS` in case a message
was lost (the channel layer was down, a queryset `.update()` sent none), when the session expired or was
deleted, its user was deactivated or deleted, or its password is no longer the one it signed in with
(Django's session auth hash). A check the database does not answer is made again at the next one; a
listener the channel layer failed (Redis restarted) listens again, and the session is checked at once.
Sockets authenticated otherwise (an API token) are left to their consumer, which joins `user-<pk>` too.
Consumers need no code for this.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import SimpleNamespace
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer

from dradash.realtime import broadcast

log = logging.getLogger(__name__)

SESSION_ENDED = 4401
CHECK_SECONDS = 30.0
#: seconds before a failed logout listener listens again, doubled per failure up to the second figure
LISTEN_RETRY = (1.0, 60.0)


def session_group(session_key: str) -> str:
    return f"session-{session_key}"


def user_group(user_pk: Any) -> str:
    return f"user-{user_pk}"


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


def user_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    """post_save / post_delete receiver of the user model: once committed, the user's sockets check
    whether they may stay open (deactivated, deleted, password changed)."""
    if kwargs.get("created"):
        return  # a new user has no sockets
    update_fields = kwargs.get("update_fields")
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return  # every login writes it; it changes nothing a socket depends on
    broadcast(user_group(instance.pk), {"type": "user.changed"})


class _UnchangedSession(dict[str, Any]):
    """A session's data for `get_user` to read: what it would flush or cycle on a request stays as is."""

    def flush(self) -> None:
        pass

    def cycle_key(self) -> None:
        pass


def _session_alive(session_key: str) -> bool:
    """Whether the session still signs its user in, as Django's `get_user` decides on each request (not
    expired nor deleted, its user still there, its password the one it signed in with), and that user is
    active (a backend's `get_user` need not check: mozilla-django-oidc's does not)."""
    from django.contrib.auth import get_user
    from django.contrib.sessions.models import Session
    from django.db import close_old_connections, connection
    from django.utils import timezone

    try:
        row = Session.objects.filter(session_key=session_key, expire_date__gt=timezone.now()).first()
        if row is None:
            return False
        user = get_user(SimpleNamespace(session=_UnchangedSession(row.get_decoded())))
        return bool(user.is_authenticated and user.is_active)
    except Exception:
        connection.close()  # it may be broken (the database went away): the next check connects again
        raise
    finally:
        close_old_connections()  # as after a request: a worker thread keeps none beyond CONN_MAX_AGE


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
        user_pk = getattr(user, "pk", None)
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        closed = asyncio.Event()
        check_now = asyncio.Event()

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

        async def listen(layer: Any) -> None:
            channel = await layer.new_channel()
            groups = [session_group(key)] + ([user_group(user_pk)] if user_pk is not None else [])
            try:
                for group in groups:
                    await layer.group_add(group, channel)
                while True:
                    message = await layer.receive(channel)
                    if message.get("type") == "session.ended":
                        await end("the session logged out")
                        return
                    if message.get("type") == "user.changed":
                        check_now.set()
            finally:
                for group in groups:
                    with contextlib.suppress(Exception):
                        await layer.group_discard(group, channel)

        async def watch_logout() -> None:
            # A channel layer that failed (Redis restarted, failed over, cut) is listened to again, after
            # a pause that doubles up to a minute: ended by one error, a logout elsewhere closed the socket
            # only at the next session check, and a password change or deactivation not before it either.
            layer = get_channel_layer()
            if layer is None:
                return
            pause = LISTEN_RETRY[0]
            while not closed.is_set():
                try:
                    await listen(layer)
                    return
                except Exception as exc:
                    task = asyncio.current_task()
                    if closed.is_set() or (task is not None and task.cancelling()):
                        # the socket ended meanwhile, or a cancel redis-py's wait_for swallowed (Python
                        # 3.11): listening again would wait on a Redis that is away, and keep the ASGI
                        # app from returning
                        raise asyncio.CancelledError from exc
                    log.warning(
                        "a websocket's logout listener failed (listening again in %s s): %s: %s",
                        pause,
                        type(exc).__name__,
                        exc,
                    )
                check_now.set()  # a logout sent while it was not listening: the session check sees it
                await asyncio.sleep(pause)
                pause = min(pause * 2, LISTEN_RETRY[1])

        async def watch_expiry() -> None:
            # A check the database did not answer (a restart, a failover, a cut) is logged and made
            # again at the next tick: ended by one error, the socket outlived its session unchecked.
            while not closed.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(check_now.wait(), self.check_seconds)
                check_now.clear()
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
                    await end("the session ended, or its user was deactivated, deleted or changed password")
                    return

        helpers = [asyncio.create_task(t()) for t in (pump, watch_logout, watch_expiry)]
        try:
            await self.app(scope, inbox.get, guarded_send)
        finally:
            closed.set()  # whatever a helper is doing, it does not start over
            for task in helpers:
                task.cancel()
            for task in helpers:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
