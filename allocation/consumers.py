"""Websocket of one what-if run: the current state on connect, then every progress event."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from allocation.models import WhatIfRun
from allocation.publish import register_server_loop, run_group
from allocation.services import whatif_run_settle


class WhatIfRunConsumer(AsyncWebsocketConsumer):
    group = ""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        register_server_loop(asyncio.get_running_loop())
        run_id = str(self.scope["url_route"]["kwargs"]["run_id"])
        # Listen before reading: a run that ends between the read and the join would look running.
        self.group = run_group(run_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        state = await self._state(run_id)
        if state is None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            self.group = ""
            await self.close(code=4404)
            return
        await self.accept()
        await self.send(text_data=json.dumps({"run": state}))

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def whatif_progress(self, event: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps({"run": event["run"]}))

    @database_sync_to_async
    def _state(self, run_id: str) -> dict[str, Any] | None:
        run = WhatIfRun.objects.filter(pk=run_id).first()
        return whatif_run_settle(run=run).public_state() if run is not None else None
