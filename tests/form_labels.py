"""Read a page as a user does: the label a form gives a field, and how the page's errors name theirs."""

from __future__ import annotations

import html
import re


def form_label(page: str, name: str) -> str:
    """The text of the <label> around the form field `name` (the words before the field)."""
    found = re.search(rf'<label[^>]*>([^<]*)<(?:input|select)[^>]*\bname="{re.escape(name)}"', page)
    assert found, f"no labelled field {name!r} on the page"
    return html.unescape(found.group(1)).strip()


def error_names(page: str) -> list[tuple[str, str]]:
    """(label, field) of every error line that names its field: "<strong>label</strong> (<code>field</code>)"
    or "<code>field</code>" alone (label "")."""
    return [
        (html.unescape(label or ""), html.unescape(field))
        for label, field in re.findall(r"<li>(?:<strong>([^<]*)</strong> \()?<code>([^<]*)</code>\)?: ", page)
    ]
