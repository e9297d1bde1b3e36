"""Any mirrored object as the cluster has it, the health of each watch, and the live version token."""

from __future__ import annotations

import hashlib
from typing import Any

import yaml
from django.db.models import QuerySet

from inventory.models import KubeObject, WatchState
from inventory.redaction import reveal_or_redact
from inventory.selectors.common import clip


def live_version() -> str:
    """A short token that changes whenever the mirror applies anything (one query over ~10 rows).

    Pages render it; the live socket and the polling fallback compare it to decide whether to refresh.
    """
    rows = WatchState.objects.order_by("kind").values_list(
        "kind", "resource_version", "state", "object_count"
    )
    digest = hashlib.sha1(repr(list(rows)).encode(), usedforsecurity=False)
    return digest.hexdigest()[:16]


def kube_object(*, kind: str, name: str, namespace: str = "") -> KubeObject | None:
    return KubeObject.objects.filter(kind=kind, namespace=namespace, name=name).first()


def kube_object_by_uid(*, kind: str, uid: str) -> KubeObject | None:
    return KubeObject.objects.filter(kind=kind, uid=uid).first()


def watch_health() -> QuerySet[WatchState]:
    return WatchState.objects.all().order_by("kind")


def object_get(*, kind: str, name: str, namespace: str = "") -> KubeObject:
    return KubeObject.objects.get(kind=kind, namespace=namespace, name=name)


def object_raw(*, obj: KubeObject, reveal: bool) -> dict[str, Any]:
    """The object as the cluster has it; values that can hold credentials only when `reveal` (admins)."""
    return reveal_or_redact(obj.raw, reveal=reveal)


def object_yaml(*, obj: KubeObject, reveal: bool) -> str:
    """The object as YAML (managedFields dropped; long strings capped; credentials only when `reveal`)."""
    raw = object_raw(obj=obj, reveal=reveal)
    metadata = dict(raw.get("metadata") or {})
    metadata.pop("managedFields", None)
    raw["metadata"] = metadata
    return yaml.safe_dump(_clip_strings(raw), default_flow_style=False, sort_keys=False)


def _clip_strings(value: Any) -> Any:
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, list):
        return [_clip_strings(v) for v in value]
    if isinstance(value, dict):
        return {clip(k, 316): _clip_strings(v) for k, v in value.items()}
    return value
