"""The live document of one maintenance: its state and the actions it allows now, its preview's state
(and whether it is stale), and the eviction progress. Sent on websocket connect, after every
coalesced change, and to pollers; a page redraws its buttons when `version` or `preview` differ from
what it shows, so a second tab never offers an action that no longer applies."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from maintenance import states
from maintenance.drain import drain_document
from maintenance.models import Maintenance
from maintenance.preview import PreviewStatus
from maintenance.progress import (
    PODS_SHOWN,
    drift_summary,
    maintenance_progress,
    rule_drift,
    undo_consequences,
)
from maintenance.services import maintenance_preview_observe


def preview_key(preview: dict[str, Any]) -> str:
    """What the page compares to know its preview panel is out of date."""
    return f"{preview['run']}:{preview['state']}:{'stale' if preview['stale'] else 'fresh'}"


def live_document(
    *, maintenance: Maintenance, progress: dict[str, Any], preview: PreviewStatus,
    drain: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    preview_doc = preview.as_dict()
    drift = rule_drift(maintenances=[maintenance]).get(maintenance.pk, [])
    return {
        **progress,
        "drift": drift,
        "drift_summary": drift_summary(drift),
        "drift_key": ",".join(f"{d['rule']}={d['cluster_effect']}" for d in drift),
        "drain": drain,
        "actions": states.offered(
            state=maintenance.state,
            effect=maintenance.applied_effect,
            drain_state=drain["state"] if drain else "",
            leftovers=bool(maintenance.leftover_rules),
        ),  # fmt: skip
        "leftover_rules": maintenance.leftover_rules,
        "preview": preview_doc,
        "preview_key": preview_key(preview_doc),
        "undo": undo_consequences(progress=progress, drain=drain)
        if maintenance.state == Maintenance.APPLIED
        else None,
    }


def maintenance_live(*, maintenance: Maintenance, now: datetime, every_pod: bool = False) -> dict[str, Any]:
    progress = maintenance_progress(
        maintenance=maintenance, now=now, pods_limit=None if every_pod else PODS_SHOWN
    )
    preview = maintenance_preview_observe(
        maintenance=maintenance, check_stale=maintenance.state != Maintenance.UNDONE
    )
    drain = drain_document(maintenance=maintenance, now=now, pods_limit=None if every_pod else PODS_SHOWN)
    return live_document(maintenance=maintenance, progress=progress, preview=preview, drain=drain)
