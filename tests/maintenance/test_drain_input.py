"""A drain's numbers (concurrency, replacement timeout) that are not whole numbers in range are refused
with a 400 naming the field, its range and the value actually sent, on the page and in the API; nothing
is applied."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.test import Client

from maintenance.models import Drain, Maintenance
from tests.maintenance.support import create, rules_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def m(mirrored: Any, operator: Any) -> Maintenance:
    return create(operator, effect="NoSchedule")


def _errors(response: Any) -> dict[str, str]:
    return {e["field"]: e["message"] for e in response.json()["errors"]}


@pytest.mark.parametrize("sent", ["abc", "1.5", "-3", "0", "51", "١"])
def test_it_says_which_concurrency_the_drain_form_sent(
    mirrored: Any, operator_client: Client, m: Maintenance, sent: str
) -> None:
    response = operator_client.post(
        f"/maintenance/{m.id}/apply/",
        {"mode": "drain", "concurrency": sent, "confirm": "yes", "version": m.version},
    )
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert (
        f"<strong>Pods evicted at once</strong> (<code>concurrency</code>): must be a whole number from 1 to 50, "
        f"got '{sent}'"
    ) in page
    assert "got -1" not in page
    assert not Drain.objects.exists() and rules_in(mirrored) == {}


@pytest.mark.parametrize(
    ("field", "sent", "shown"),
    [
        ("concurrency", "abc", 'a string "abc"'),
        ("concurrency", 1.5, "a number 1.5"),
        ("concurrency", 0, "0"),
        ("concurrency", -2, "-2"),
        ("concurrency", True, "a boolean true"),
        ("replacement_timeout", "60", 'a string "60"'),
        ("replacement_timeout", 3601, "3601"),
    ],
)
def test_it_says_which_drain_number_the_api_was_sent(
    mirrored: Any, operator_client: Client, m: Maintenance, field: str, sent: Any, shown: str
) -> None:
    high = 50 if field == "concurrency" else 3600
    response = operator_client.post(f"/api/maintenance/{m.id}/apply/", {"mode": "drain", field: sent, "confirm": True},
                           content_type="application/json")  # fmt: skip
    assert response.status_code == 400
    assert _errors(response)[field] == f"must be a whole number from 1 to {high}, got {shown}"
    assert not Drain.objects.exists() and rules_in(mirrored) == {}


@pytest.mark.parametrize(("sent", "shown"), [("abc", "'abc'"), ("-1", "'-1'"), ("0", "'0'"), ("99", "'99'")])
def test_it_says_which_concurrency_the_forecast_was_asked_for(
    mirrored: Any, operator_client: Client, m: Maintenance, sent: str, shown: str
) -> None:
    response = operator_client.get(f"/api/maintenance/{m.id}/drain-forecast/", {"concurrency": sent})
    assert response.status_code == 400
    assert _errors(response) == {"concurrency": f"must be a whole number from 1 to 50, got {shown}"}
