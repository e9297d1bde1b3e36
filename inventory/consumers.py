"""Live updates for the inventory pages: one socket per page, group "inventory", coalesced pushes."""

from __future__ import annotations

import asyncio
import time
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.conf import settings

from dradash.sessionguard import user_group
from dradash.sockets import CLOSE_BAD_REQUEST, JsonSocket
from dradash.tokens import user_for_key
from inventory.kube import MIRRORED_KINDS
from inventory.selectors.objects import live_version

INVENTORY_GROUP = "inventory"
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403


class InventoryConsumer(JsonSocket):
    """Tells a page which kinds changed, at most once per DRADASH_LIVE_COALESCE_MS.

    Messages to the browser:
    - `{"type": "hello", "version": v}` on connect: the page compares `v` with the version it was
      rendered at and refreshes if they differ (a page that connects late still shows the truth).
    - `{"type": "changed", "kinds": [...], "rv": "...", "version": v}` after one or more mirror batches.
    """

    pending_kinds: set[str]
    pending_all: bool
    pending_rv: Any
    flush_task: asyncio.Task[None] | None
    last_push: float

    async def connect(self) -> None:
        user = self.scope.get("user")
        await self.accept()
        if user is None or not user.is_authenticated:
            # Accept first so the browser sees the code (a refused handshake is just "1006").
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        if not user.is_active:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.pending_kinds = set()
        self.pending_all = False
        self.pending_rv = ""
        self.flush_task = None
        self.last_push = 0.0
        await self.channel_layer.group_add(INVENTORY_GROUP, self.channel_name)
        self.joined = True
        await self.send_json({"type": "hello", "version": await database_sync_to_async(live_version)()})

    async def disconnect(self, code: int) -> None:
        if getattr(self, "joined", False):
            await self.channel_layer.group_discard(INVENTORY_GROUP, self.channel_name)
        task = getattr(self, "flush_task", None)
        if task is not None:
            task.cancel()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def inventory_changed(self, event: dict[str, Any]) -> None:
        kinds = event.get("kinds")
        if isinstance(kinds, list) and kinds:
            self.pending_kinds.update(str(k) for k in kinds)
        else:
            self.pending_all = True  # a batch that does not say what changed: refresh everything
        if event.get("rv"):
            self.pending_rv = event["rv"]  # whatever the mirror sends (a string or {kind: rv})
        if self.flush_task is None:
            self._schedule_flush()

    def _schedule_flush(self) -> None:
        window = settings.DRADASH_LIVE_COALESCE_MS / 1000.0
        wait = max(0.0, self.last_push + window - time.monotonic())
        self.flush_task = asyncio.ensure_future(self.or_close(self._flush_after(wait)))

    async def _flush_after(self, wait: float) -> None:
        # flush_task stays set until the message is out, so disconnect() can cancel a flush mid-send;
        # batches that arrive meanwhile are picked up by the next flush scheduled at the end.
        try:
            if wait > 0:
                await asyncio.sleep(wait)
            kinds = None if self.pending_all else sorted(self.pending_kinds)
            rv = self.pending_rv
            self.pending_kinds = set()
            self.pending_all = False
            self.last_push = time.monotonic()
            version = await database_sync_to_async(live_version)()
            await self.send_json({"type": "changed", "kinds": kinds, "rv": rv, "version": version})
        finally:
            self.flush_task = None
        if self.pending_kinds or self.pending_all:
            self._schedule_flush()


def _watch_versions() -> dict[str, str]:
    from inventory.models import WatchState

    return dict(WatchState.objects.values_list("kind", "resource_version"))


class InventoryStreamConsumer(JsonSocket):
    """The inventory change stream for automation (`/ws/api/inventory/`), documented in docs/API.md.

    Authenticates with the session cookie or `Authorization: Token <key>` (`dradash.tokens`). On connect:
    `{"type": "hello", "resourceVersions": {kind: rv}}` — list through the REST API, then apply the
    changes that follow. Then, per mirror batch: `{"type": "changes", "changes": [{kind, type, uid,
    name, namespace}], "count": n, "truncated": bool, "rv": {kind: rv}}`. `?kinds=a,b` limits the kinds.
    A socket opened with a token is closed (4401) at once when its user is deactivated or deleted, or the
    token is revoked (the `user.changed` message to `user-<pk>`: `dradash.sessionguard.user_changed`, and
    `dradash.tokens`' revokes), and otherwise at the next change, should that message have been lost. A
    session's socket ends with its session: `dradash.sessionguard`.
    """

    kinds: set[str] | None = None
    token_key: str = ""
    token_user_group: str = ""

    async def connect(self) -> None:
        await self.accept()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            headers = dict(self.scope.get("headers") or [])
            auth = headers.get(b"authorization", b"").decode("latin-1")
            self.token_key = auth[6:].strip() if auth.startswith("Token ") else ""
            user = await database_sync_to_async(user_for_key)(self.token_key) if self.token_key else None
        if user is None:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        if self.token_key:
            self.token_user_group = user_group(user.pk)
            await self.channel_layer.group_add(self.token_user_group, self.channel_name)
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        asked = {k for value in query.get("kinds", []) for k in value.split(",") if k}
        if unknown := sorted(asked - set(MIRRORED_KINDS)):
            await self.send_error(
                f"kinds: {', '.join(repr(k[:60]) for k in unknown[:5])} not mirrored; the kinds are "
                + ", ".join(MIRRORED_KINDS)
            )
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        if asked:
            self.kinds = asked
        await self.channel_layer.group_add(INVENTORY_GROUP, self.channel_name)
        self.joined = True
        await self.send_json(
            {"type": "hello", "resourceVersions": await database_sync_to_async(_watch_versions)()}
        )

    async def disconnect(self, code: int) -> None:
        if getattr(self, "joined", False):
            await self.channel_layer.group_discard(INVENTORY_GROUP, self.channel_name)
        if self.token_user_group:
            await self.channel_layer.group_discard(self.token_user_group, self.channel_name)

    async def _closed_if_token_refused(self) -> bool:
        if self.token_key and await database_sync_to_async(user_for_key)(self.token_key) is None:
            await self.close(code=CLOSE_UNAUTHENTICATED)  # the token was revoked, or its user deactivated
            return True
        return False

    async def user_changed(self, event: dict[str, Any]) -> None:
        """The token's user was saved or deleted: a deactivated or deleted user's socket ends now."""
        await self._closed_if_token_refused()

    async def inventory_changed(self, event: dict[str, Any]) -> None:
        if await self._closed_if_token_refused():
            return
        changes = event.get("changes") or []
        if self.kinds is not None:
            changes = [c for c in changes if c.get("kind") in self.kinds]
            if not changes and not (set(event.get("kinds") or []) & self.kinds):
                return
        await self.send_json(
            {
                "type": "changes",
                "changes": changes,
                "count": event.get("count", len(changes)),
                "truncated": bool(event.get("truncated")),
                "rv": event.get("rv"),
            }
        )
