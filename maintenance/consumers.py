"""Live maintenance pages.

- `/ws/maintenance/<id>/` (`?pods=all` lists every pod): the maintenance's live document (state,
  allowed actions, preview state, eviction progress) on connect, then again after every coalesced burst of cluster changes (pods,
  claims, slices, rules), maintenance writes, or progress of its preview run.
- `/ws/maintenance-audit/`: the audit page's socket (and the maintenance list's: every change of a maintenance is an
  entry), in the protocol of static/dradash/live.js:
  `{"type": "hello", "version"}` on connect, `{"type": "changed", "kinds": ["audit"], "version"}` after
  new entries (the version is the newest entry's id).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from dradash.sockets import JsonSocket
from maintenance.audit import AUDIT_GROUP, latest_version
from maintenance.live import maintenance_live
from maintenance.models import Maintenance

RELEVANT_KINDS = {"pods", "resourceclaims", "devicetaintrules", "resourceslices", "poddisruptionbudgets"}
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404


def _live(maintenance_id: str, every_pod: bool = False) -> dict[str, Any] | None:
    maintenance = Maintenance.objects.filter(pk=maintenance_id).first()
    if maintenance is None:
        return None
    return maintenance_live(maintenance=maintenance, now=timezone.now(), every_pod=every_pod)


class _Coalescing(JsonSocket):
    """At most one push per DRADASH_LIVE_COALESCE_MS; changes that arrive meanwhile join the next.

    A change that arrives while a push is reading the database may not be in what it reads, so it
    marks the socket dirty and the flush pushes again (it is never dropped for a push under way)."""

    flush_task: asyncio.Task[None] | None = None
    last_push: float = 0.0
    dirty: bool = False
    joined: list[str]

    async def join(self, group: str) -> None:
        await self.channel_layer.group_add(group, self.channel_name)
        self.joined.append(group)

    async def leave(self, group: str) -> None:
        await self.channel_layer.group_discard(group, self.channel_name)
        self.joined.remove(group)

    async def disconnect(self, code: int) -> None:
        for group in list(getattr(self, "joined", [])):
            await self.channel_layer.group_discard(group, self.channel_name)
        if self.flush_task is not None:
            self.flush_task.cancel()

    def schedule(self) -> None:
        self.dirty = True
        if self.flush_task is None or self.flush_task.done():
            self.flush_task = asyncio.ensure_future(self.or_close(self._flush()))

    async def _flush(self) -> None:
        interval = settings.DRADASH_LIVE_COALESCE_MS / 1000.0
        while self.dirty:
            wait = self.last_push + interval - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self.dirty = False
            self.last_push = time.monotonic()
            await self.push()

    async def push(self) -> None:
        raise NotImplementedError


class MaintenanceProgressConsumer(_Coalescing):
    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        self.joined = []
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.maintenance_id = self.scope["url_route"]["kwargs"]["maintenance_id"]
        # `?pods=all`: every affected pod in each document (automation; pages get the first 200).
        self.every_pod = b"pods=all" in (self.scope.get("query_string") or b"").split(b"&")
        self.preview_group = ""
        # Listen before reading: a change between the read and the join would be lost.
        await self.join("inventory")
        await self.join(f"maintenance-{self.maintenance_id}")
        document = await database_sync_to_async(_live)(self.maintenance_id, self.every_pod)
        if document is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self._follow_preview(document)
        await self.send_json({"type": "progress", "progress": document})

    async def _follow_preview(self, document: dict[str, Any]) -> None:
        """Listen to the latest preview run's group while it works (its progress and its end).

        The group is joined after the document was read: a run that ended in between sent its end
        to nobody, so joining reads the document once more."""
        run = document["preview"]["run"]
        wanted = f"whatif-{run}" if run and document["preview"]["state"] in ("pending", "running") else ""
        if wanted == self.preview_group:
            return
        if self.preview_group:
            await self.leave(self.preview_group)
        if wanted:
            await self.join(wanted)
            self.schedule()
        self.preview_group = wanted

    async def inventory_changed(self, event: dict[str, Any]) -> None:
        if RELEVANT_KINDS & set(event.get("kinds") or []):
            self.schedule()

    async def maintenance_changed(self, event: dict[str, Any]) -> None:
        self.schedule()

    async def whatif_progress(self, event: dict[str, Any]) -> None:
        self.schedule()

    async def push(self) -> None:
        document = await database_sync_to_async(_live)(self.maintenance_id, self.every_pod)
        if document is not None:
            await self._follow_preview(document)
            await self.send_json({"type": "progress", "progress": document})


class AuditConsumer(_Coalescing):
    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        self.joined = []
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        await self.join(AUDIT_GROUP)
        await self.send_json({"type": "hello", "version": await database_sync_to_async(latest_version)()})

    async def audit_changed(self, event: dict[str, Any]) -> None:
        self.schedule()

    async def push(self) -> None:
        version = await database_sync_to_async(latest_version)()
        await self.send_json({"type": "changed", "kinds": ["audit"], "version": version})
