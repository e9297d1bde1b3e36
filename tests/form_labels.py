"""Read a page as a user does: the label a form gives a field, and how the page's errors name theirs."""

from __future__ import annotations

import html
import re


def _control(markup: str, name: str) -> re.Match[str] | None:
    return re.search(rf'<(?:input|select|textarea)\b[^>]*\bname="{re.escape(name)}"[^>]*>', markup)


def _words(label: str, control: re.Match[str] | None) -> str:
    words = label.split("<", 1)[0].strip()
    if not words and control is not None:
        words = label[control.end() :].split("<", 1)[0].strip()
    return html.unescape(words)


def form_label(page: str, name: str) -> str:
    """The words of the <label> of the form field `name`: those it opens with (before the field or any
    markup in it: "To confirm, type" before the phrase), or for a label that opens with its field (a
    checkbox), the words after the field. A label holds its field, or else names it (`for` its id)."""
    labels = re.findall(r"<label\b([^>]*)>(.*?)</label>", page, re.S)
    for _, label in labels:
        if control := _control(label, name):
            return _words(label, control)
    outside = _control(page, name)
    for attributes, label in labels:
        target = re.search(r'\bfor="([^"]+)"', attributes)
        if outside and target and f'id="{target.group(1)}"' in outside.group(0):
            return _words(label, None)
    raise AssertionError(f"no labelled field {name!r} on the page")


def error_names(page: str) -> list[tuple[str, str]]:
    """(label, field) of every error line that names its field: "<strong>label</strong> (<code>field</code>)"
    or "<code>field</code>" alone (label "")."""
    return [
        (html.unescape(label or ""), html.unescape(field))
        for label, field in re.findall(r"<li>(?:<strong>([^<]*)</strong> \()?<code>([^<]*)</code>\)?: ", page)
    ]


def page_filters(page: str) -> list[tuple[str, str]]:
    """(label, parameter) of each filter a list page says it takes, when it was sent a parameter that is not
    one (partials/query_errors.html)."""
    found = re.search(r'<p class="page-filters" id="page-filters">This page\'s filters: (.*?)\.</p>', page)
    assert found, "the page does not say which filters it takes"
    return [
        (html.unescape(label), html.unescape(name))
        for label, name in re.findall(r"<strong>([^<]*)</strong> \(<code>([^<]*)</code>\)", found.group(1))
    ]
