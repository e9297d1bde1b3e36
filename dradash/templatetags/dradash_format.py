"""One way to show cluster strings and one way to show times, on every page (a builtin library: no
{% load %} needed).

- ``{{ value|k8s }}`` (or ``|k8s:80`` to cap the length): a string from the cluster or a user — a name, a
  reason, a title — inside ``<bdi class="k8s">``, escaped. The bdi isolates it for bidi (a U+202E in a title
  cannot reverse the text around it) and the class lets it wrap anywhere, so an unbroken 500-character
  reason wraps instead of widening the page. A word (no whitespace, at most WORD_MAX characters: a name
  such as "worker-0006") is ``<bdi class="k8s word">``: a table cell keeps it whole and scrolls instead.
- ``{% when value %}``: a ``<time>`` whose text is relative ("3 min ago") with the absolute UTC time in its
  title and datetime attribute; static/dradash/time.js keeps the text current. ``{% when value "absolute" %}``
  shows the absolute time as text. Accepts datetimes and RFC 3339 strings from the cluster.
- ``{% field_name e %}``: the field an error is about, as the form labels it, then as the server names it:
  ``<strong>Allocation</strong> (<code>state</code>)`` (see dradash/fieldnames.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django import template
from django.conf import settings
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

#: A string without whitespace up to this long is a word (a name, a status): a table cell does not break it
#: ("worker-" / "0006" at the hyphen), its table scrolls in its box instead; a longer one wraps where it must.
#: 63, a DNS label: the longest name Kubernetes generates for a claim (a template's, or the scheduler's for a
#: pod's extended resources, "trainer-7f9c-example-com-gpu-extended-resources-abcde") or a pod.
WORD_MAX = 63


def word_class(text: str) -> str:
    """ "word" for a string a table cell keeps whole (see WORD_MAX), else ""."""
    return "word" if 0 < len(text) <= WORD_MAX and not any(c.isspace() for c in text) else ""


def _capped(value: Any, limit: Any) -> str:
    text = "" if value is None else str(value)
    n = int(limit) if limit else int(getattr(settings, "DRADASH_MAX_STRING", 256))
    return text if len(text) <= n else text[: n - 1] + "…"


@register.filter(is_safe=True)
def k8s(value: Any, limit: Any = None) -> SafeString:
    """An untrusted string, escaped, capped and isolated: <bdi class="k8s">…</bdi> (class "k8s word" for a
    word)."""
    text = _capped(value, limit)
    return format_html('<bdi class="{}">{}</bdi>', " ".join(filter(None, ("k8s", word_class(text)))), text)


def parse_time(value: Any) -> datetime | None:
    """A datetime (naive = UTC) or an RFC 3339 string ("2026-11-29T17:49:09Z"), as an aware UTC datetime."""
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, str) and value:
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    if timezone.is_naive(when):
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


def relative(when: datetime, now: datetime) -> str:
    """ "just now", "42 s ago", "3 min ago", "5 h ago", "2 d ago", "in 4 min" — the same words as time.js."""
    seconds = int((now - when).total_seconds())
    future = seconds < 0
    seconds = abs(seconds)
    if seconds < 5:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= size:
            amount = f"{seconds // size} {unit}"
            return f"in {amount}" if future else f"{amount} ago"
    return "just now"  # pragma: no cover


def absolute(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


@register.filter
def delay(seconds: Any) -> str:
    """How long after an event something happens: "at once", "after 45 s", "after 5 min", "after 1 h 30 min"
    (a NoExecute eviction after its toleration's tolerationSeconds). Not a moment: a what-if answer read
    tomorrow still says when, counted from the taint."""
    if seconds is None or isinstance(seconds, bool):
        return "—"
    try:
        left = int(float(seconds) + 0.999)  # a fraction of a second left still waits
    except (TypeError, ValueError):
        return "—"
    if left <= 0:
        return "at once"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if left >= size:
            parts.append(f"{left // size} {unit}")
            left %= size
    return "after " + " ".join(parts[:2])


@register.simple_tag
def field_name(error: Any) -> SafeString:
    """<strong>label</strong> (<code>field</code>), or <code>field</code> when the page has no label for it."""
    label, field = getattr(error, "label", ""), getattr(error, "field", "")
    if label:
        return format_html("<strong>{}</strong> (<code>{}</code>)", label, _capped(field, 100))
    return format_html("<code>{}</code>", _capped(field, 100))


@register.simple_tag
def when(value: Any, style: str = "relative") -> str:
    """<time datetime="ISO" title="absolute UTC">3 min ago</time>; "—" when there is no time."""
    moment = parse_time(value)
    if moment is None:
        return format_html('<span class="muted">{}</span>', "—" if not value else _capped(value, 40))
    iso = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    text = absolute(moment) if style == "absolute" else relative(moment, timezone.now())
    return format_html(
        '<time datetime="{}" title="{}" data-time="{}">{}</time>', iso, absolute(moment), style, text
    )
