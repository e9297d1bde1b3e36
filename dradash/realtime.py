"""The one broadcast helper: send an event to a websocket group, only after the transaction commits."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)


def broadcast(group: str, event: dict[str, Any]) -> None:
    """Queue `event` for `group` once the current transaction commits (at once outside one).

    `event` must carry a `type` naming the consumer handler (e.g. "inventory.changed").
    """

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(group, event)
        except Exception:  # a broken channel layer must not break the write that triggered it
            log.exception("broadcast to %s failed", group)

    transaction.on_commit(send)
