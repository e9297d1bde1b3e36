"""Broadcast a run's state to its websocket group, `whatif-<id>`, through `dradash.realtime`.

The worker runs in another process: with Redis it sends on the shared channel layer; the embedded
worker (a child of the web process) has its sends relayed to the parent, which owns the in-memory
layer (`allocation.supervisor`). The server's event loop is registered by the ASGI app, and also by
the run consumer when it connects (so it is known even without the project's ASGI wrapper).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dradash.realtime import broadcast, register_server_loop

if TYPE_CHECKING:
    from allocation.models import WhatIfRun

__all__ = ["publish_run", "register_server_loop", "run_event", "run_group"]


def run_group(run_id: Any) -> str:
    return f"whatif-{run_id}"


def run_event(run: WhatIfRun) -> dict[str, Any]:
    return {"type": "whatif.progress", "run": run.public_state()}


def publish_run(run: WhatIfRun) -> None:
    broadcast(run_group(run.pk), run_event(run))
