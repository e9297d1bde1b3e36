"""The Maintenance list: a maintenance's title is a link to its page, as its ID is (only the ID linked, so
the words a user looks for were not a way in); the keyboard stops once a row, on the title."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from tests.maintenance.test_detail_page import a_draft

pytestmark = pytest.mark.django_db


def test_the_title_links_to_the_maintenance_once_a_row_for_the_keyboard(
    operator: Any, operator_client: Client
) -> None:
    m = a_draft(operator)

    page = operator_client.get("/maintenance/").content.decode()

    (row,) = re.findall(r"<tr>\s*<td>.*?</tr>", page.split("<tbody>")[1], re.S)
    links = re.findall(r"<a ([^>]*)>(.*?)</a>", row, re.S)
    to_it = [
        (attrs, re.sub(r"<[^>]+>", "", text))
        for attrs, text in links
        if f'href="/maintenance/{m.id}/"' in attrs
    ]
    assert [text for _, text in to_it] == [m.id, "Firmware update"]
    tabbable = [text for attrs, text in to_it if 'tabindex="-1"' not in attrs]
    assert tabbable == ["Firmware update"]
