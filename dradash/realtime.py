"""The one broadcast helper: send an event to a websocket group, only after the transaction commits.

Writers (the mirror, what-if workers, maintenance services) run in threads. The in-memory channel
layer is not thread-safe and belongs to the ASGI server's event loop, so when that loop is known
(`register_server_loop`, called by the ASGI app on its first request) sends are scheduled onto it;
otherwise (Redis layer, management commands, tests) they go through `async_to_sync`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)

_server_loop: asyncio.AbstractEventLoop | None = None
_forward: Callable[[str, dict[str, Any]], None] | None = None
_lock = threading.Lock()


def register_server_loop(loop: asyncio.AbstractEventLoop) -> None:
    global _server_loop
    with _lock:
        _server_loop = loop


def forward_sends(to: Callable[[str, dict[str, Any]], None] | None) -> None:
    """Hand every send of this process to `to` instead of its own channel layer (None: stop).

    For a child process whose parent owns the in-memory layer the websockets are on (the embedded
    what-if worker): `to` passes the event to the parent, which sends it with `send_now`.
    """
    global _forward
    with _lock:
        _forward = to


def send_now(group: str, event: dict[str, Any]) -> None:
    """Send at once (no transaction semantics). Prefer `broadcast` in services."""
    forward = _forward
    if forward is not None:
        try:
            forward(group, event)
        except Exception:  # the parent is gone or the pipe is full: the write itself must not fail
            log.exception("forwarding a broadcast to %s failed", group)
        return
    layer = get_channel_layer()
    if layer is None:
        return
    loop = _server_loop
    try:
        if loop is not None and loop.is_running():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                loop.create_task(layer.group_send(group, event))
            else:
                asyncio.run_coroutine_threadsafe(layer.group_send(group, event), loop).result(timeout=10)
        else:
            async_to_sync(layer.group_send)(group, event)
    except Exception:  # a broken channel layer must not break the write that triggered it
        log.exception("broadcast to %s failed", group)


def broadcast(group: str, event: dict[str, Any]) -> None:
    """Queue `event` for `group` once the current transaction commits (at once outside one).

    `event` must carry a `type` naming the consumer handler (e.g. "inventory.changed").
    """
    transaction.on_commit(lambda: send_now(group, event))
