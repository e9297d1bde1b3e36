"""Fault injection for tests: the in-process face of the `/_simcluster/` control paths."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from simcluster.server import SimServer

T = TypeVar("T")


class Faults:
    """Drive faults from any thread while the server runs on its own event loop."""

    def __init__(self, server: SimServer, loop: asyncio.AbstractEventLoop) -> None:
        self._server = server
        self._loop = loop

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def compact_history(self) -> int:
        """Forget the event history: watches and continue tokens from older resourceVersions get 410."""
        return self._server.store.compact()

    def drop_watches(self) -> int:
        """End every open watch stream; returns how many were open."""

        async def drop() -> int:
            return self._server.drop_watches()

        return self._run(drop())

    def restart(self) -> None:
        """Close every connection, stop listening briefly, listen again on the same port with the same state."""
        self._run(self._server.restart())

    def set_latency(self, ms: int) -> None:
        """Delay every API answer by `ms` milliseconds (0 turns it off)."""
        self._server.latency_ms = max(0, int(ms))
