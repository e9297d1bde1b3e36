"""Small presentation helpers. Everything from the cluster is untrusted: these never mark text safe."""

from __future__ import annotations

import json
from typing import Any

import yaml
from django import template
from django.conf import settings

from dra.objects import LIST_ATTRIBUTE_TYPES, attribute_text
from dra.taints import effective_effect, toleration_text
from inventory import tables
from inventory.tables import pod_status_tone

register = template.Library()


@register.simple_tag(takes_context=True)
def nav_active(context: template.Context, prefix: str) -> str:
    request = context.get("request")
    match = getattr(request, "resolver_match", None)
    name = getattr(match, "url_name", "") or ""
    return "active" if name.startswith(prefix) else ""


@register.filter
def cap(value: Any, limit: int | None = None) -> str:
    """Cut a string from the cluster to a sane length for display (settings.DRADASH_MAX_STRING)."""
    text = "" if value is None else str(value)
    n = int(limit) if limit else settings.DRADASH_MAX_STRING
    return text if len(text) <= n else text[: n - 1] + "…"


@register.filter
def effect_class(effect: Any) -> str:
    """CSS class for a taint effect; an unknown effect is shown as itself but styled (and treated) like None."""
    return effective_effect(str(effect))


@register.filter
def to_yaml(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)


@register.filter
def toleration(raw: Any) -> str:
    """A toleration as `key=value:Effect for Ns` (`dra.taints.toleration_text`), capped; JSON if malformed."""
    if not isinstance(raw, dict):
        return cap(to_json(raw), 160)
    return cap(toleration_text(raw), 160)


@register.filter
def to_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True)


@register.filter
def attr_list(attribute: Any) -> list[str] | None:
    """The elements of a list-typed DeviceAttribute ({"strings": [...]}, DRAListTypeAttributes), None for the
    others: a page shows each element on its own (a chip), so "a,b" and "c" never read as "a", "b", "c"."""
    if isinstance(attribute, dict) and len(attribute) == 1:
        ((kind, value),) = attribute.items()
        if kind in LIST_ATTRIBUTE_TYPES and isinstance(value, list):
            return [attribute_text(v) for v in value]
    return None


@register.filter
def attr_value(attribute: Any) -> str:
    """Render a DeviceAttribute ({"int": 0} / {"string": "h200"} / list forms) as plain text; a list as a JSON
    list (["a,b", "c"]), whose elements cannot run together."""
    if isinstance(attribute, dict) and len(attribute) == 1:
        (value,) = attribute.values()
        if isinstance(value, list):
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)
    return json.dumps(attribute, sort_keys=True)


@register.filter
def health_label(health: Any) -> str:
    """A device's health as every page shows it (inventory.tables.health_label: "not reported" for none)."""
    return tables.health_label(str(health or ""))


@register.filter
def get_item(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def ago(when: Any) -> str:
    """A compact age ("4s ago", "3m ago", "2h ago", "5d ago") for timestamps in dense tables."""
    from django.utils import timezone

    if when is None:
        return ""
    seconds = max(0, int((timezone.now() - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


@register.filter
def short_time(value: Any) -> str:
    """RFC 3339 from the cluster ("2026-11-29T17:49:09Z") as "2026-11-29 17:49:09"; anything else capped."""
    text = "" if value is None else str(value)
    if len(text) >= 19 and text[10] == "T":
        return text[:10] + " " + text[11:19]
    return cap(text, 40)


@register.filter
def first_label(name: Any) -> str:
    """ "gpu.example.com" → "gpu": a short tag for dense layouts (the full name is in the title)."""
    return cap(str(name or "").split(".", 1)[0], 24)


@register.filter
def pod_tone(status: Any, phase: Any) -> str:
    """The badge class of a pod's kubectl STATUS (ok, warn, bad), with its phase."""
    return pod_status_tone(str(status or ""), str(phase or ""))
