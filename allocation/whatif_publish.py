"""Broadcast a run's state to its websocket group, `whatif-<id>`, from whichever thread runs it.

With a Redis channel layer this is `dradash.realtime.broadcast` (after commit). The in-memory layer
is per process and not thread-safe (libraries.md §5): events from the embedded worker thread are
handed to the server's event loop, registered by the first consumer that connects (or by
`start_embedded_worker(loop=...)`). Without a registered loop nobody in this process is listening,
and a page that connects later reads the current state from the row anyway.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from channels.layers import InMemoryChannelLayer, get_channel_layer

from dradash.realtime import broadcast

if TYPE_CHECKING:
    from allocation.models import WhatIfRun

log = logging.getLogger(__name__)
_server_loop: asyncio.AbstractEventLoop | None = None


def register_server_loop(loop: asyncio.AbstractEventLoop) -> None:
    global _server_loop
    _server_loop = loop


def run_group(run_id: Any) -> str:
    return f"whatif-{run_id}"


def run_event(run: WhatIfRun) -> dict[str, Any]:
    return {"type": "whatif.progress", "run": run.public_state()}


def publish_run(run: WhatIfRun) -> None:
    group, event = run_group(run.pk), run_event(run)
    layer = get_channel_layer()
    if layer is None:
        return
    if not isinstance(layer, InMemoryChannelLayer):
        broadcast(group, event)
        return
    loop = _server_loop
    if loop is None or loop.is_closed():
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        loop.create_task(layer.group_send(group, event))
        return
    future = asyncio.run_coroutine_threadsafe(layer.group_send(group, event), loop)
    future.add_done_callback(_log_failure)


def _log_failure(future: Any) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("what-if progress broadcast failed: %s", future.exception())
