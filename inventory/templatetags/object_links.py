"""`{% load object_links %}`: every pod, claim, node, device and rule name on a page is a link to its page.

    {% pod_link namespace name %}            {% claim_link namespace name %}
    {% node_link name %}                     {% rule_link name %}
    {% device_link driver pool name %}       (text: the device name; `full=True`: driver/pool/name)

Names from the cluster are untrusted: format_html escapes them, wraps them in <bdi> (a right-to-left
name cannot reorder the text around it) and caps them for display. An empty name renders as "—".
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from dradash.templatetags.dradash_format import word_class
from inventory import links
from inventory.templatetags.dradash_ui import cap

register = template.Library()


def _link(url: str, text: str, css: str) -> SafeString:
    # a name stays whole in a table cell (dradash_format.WORD_MAX); "namespace/name" too long for one word
    # may break after its slash only, as the Devices table's references do (devices.js)
    if word_class(text):
        return format_html('<a class="{}" href="{}"><bdi class="word">{}</bdi></a>', css, url, text)
    head, slash, name = text.rpartition("/")
    if slash and word_class(head + slash) and word_class(name):
        return format_html(
            '<a class="{}" href="{}"><bdi><span class="word">{}</span><span class="word">{}</span></bdi></a>',
            css, url, head + slash, name,
        )  # fmt: skip
    return format_html('<a class="{}" href="{}"><bdi>{}</bdi></a>', css, url, text)


def _dash() -> SafeString:
    return format_html('<span class="muted">{}</span>', "—")


@register.simple_tag
def pod_link(namespace: Any, name: Any, *, short: bool = False) -> SafeString:
    if not namespace or not name:
        return _dash()
    text = cap(name, 120) if short else f"{cap(namespace, 63)}/{cap(name, 120)}"
    return _link(links.pod_url(str(namespace), str(name)), text, "obj-link pod-link")


@register.simple_tag
def claim_link(namespace: Any, name: Any, *, short: bool = False) -> SafeString:
    if not namespace or not name:
        return _dash()
    text = cap(name, 120) if short else f"{cap(namespace, 63)}/{cap(name, 120)}"
    return _link(links.claim_url(str(namespace), str(name)), text, "obj-link claim-link")


@register.simple_tag
def node_link(name: Any) -> SafeString:
    if not name:
        return _dash()
    return _link(links.node_url(str(name)), cap(name, 120), "obj-link node-link")


@register.simple_tag
def rule_link(name: Any) -> SafeString:
    if not name:
        return _dash()
    return _link(links.rule_url(str(name)), cap(name, 120), "obj-link rule-link")


@register.simple_tag
def device_link(driver: Any, pool: Any, name: Any, *, full: bool = False) -> SafeString:
    if not driver or not pool or not name:
        return _dash()
    text = f"{cap(driver, 60)}/{cap(pool, 60)}/{cap(name, 63)}" if full else cap(name, 63)
    return _link(links.device_url(str(driver), str(pool), str(name)), text, "obj-link device-link")
