"""Live eviction progress of one maintenance: the full progress document on connect, then again after
every coalesced burst of cluster changes (pods, claims, rules) or maintenance writes."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.utils import timezone

from maintenance.models import Maintenance
from maintenance.progress import maintenance_progress

RELEVANT_KINDS = {"pods", "resourceclaims", "devicetaintrules"}


def _progress(maintenance_id: str) -> dict[str, Any] | None:
    maintenance = Maintenance.objects.filter(pk=maintenance_id).first()
    if maintenance is None:
        return None
    return maintenance_progress(maintenance=maintenance, now=timezone.now())


class MaintenanceProgressConsumer(AsyncJsonWebsocketConsumer):
    flush_task: asyncio.Task[None] | None = None
    last_push: float = 0.0
    joined: list[str]

    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.maintenance_id = self.scope["url_route"]["kwargs"]["maintenance_id"]
        document = await database_sync_to_async(_progress)(self.maintenance_id)
        if document is None:
            await self.close(code=4404)
            return
        self.joined = ["inventory", f"maintenance-{self.maintenance_id}"]
        for group in self.joined:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.send_json({"type": "progress", "progress": document})

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)
        if self.flush_task is not None:
            self.flush_task.cancel()

    async def inventory_changed(self, event: dict[str, Any]) -> None:
        if RELEVANT_KINDS & set(event.get("kinds") or []):
            self._schedule()

    async def maintenance_changed(self, event: dict[str, Any]) -> None:
        self._schedule()

    def _schedule(self) -> None:
        if self.flush_task is None or self.flush_task.done():
            self.flush_task = asyncio.ensure_future(self._flush())

    async def _flush(self) -> None:
        interval = settings.DRADASH_LIVE_COALESCE_MS / 1000.0
        wait = self.last_push + interval - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self.last_push = time.monotonic()
        document = await database_sync_to_async(_progress)(self.maintenance_id)
        if document is not None:
            await self.send_json({"type": "progress", "progress": document})
