"""A list page sent a parameter that is not one of its filters names it as the rest of the UI names fields —
escaped, capped in length, the first few of many with a count of the rest — and says which filters it does
take by their labels on its form ("Search (q), Driver (driver), …"), not as a raw list of parameter names."""

from __future__ import annotations

import pytest
from django.test import Client

from dradash.fieldnames import PARAMETER_NAME_MAX, PARAMETERS_NAMED
from inventory.filters import CLAIM_FILTER_LABELS, DEVICE_FILTER_LABELS, NODE_FILTER_LABELS, POD_FILTER_LABELS
from tests.form_labels import error_names, form_label, page_filters
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db

PAGES = [
    ("/devices/", DEVICE_FILTER_LABELS),
    ("/claims/", CLAIM_FILTER_LABELS),
    ("/pods/", POD_FILTER_LABELS),
    ("/nodes/", NODE_FILTER_LABELS),
]


@pytest.fixture
def client_in(client: Client) -> Client:
    client.force_login(make_user())
    return client


@pytest.mark.parametrize(("path", "labels"), PAGES)
def test_it_says_which_filters_the_page_takes_by_their_labels_on_the_form(
    client_in: Client, path: str, labels: dict[str, str]
) -> None:
    response = client_in.get(path, {"nodee": "node-1"})
    assert response.status_code == 400
    page = response.content.decode()
    assert error_names(page) == [("", "nodee")]
    assert "<li><code>nodee</code>: not a filter of this page</li>" in page
    assert page_filters(page) == [(label, name) for name, label in labels.items()]
    for label, name in page_filters(page):
        if name != "claim":  # the Devices form has no Claim field; a device's claim link sets it
            assert form_label(page, name) == label
    assert "its filters are" not in page  # not the raw list of parameter names


def test_it_names_a_parameter_escaped_and_capped(client_in: Client) -> None:
    long_name = "x" * 300
    page = client_in.get("/devices/", {"<b>bold</b>": "1", long_name: "1"}).content.decode()
    alert = page.split('id="query-errors"')[1].split("</div>")[0]
    assert "<b>bold</b>" not in alert and "&lt;b&gt;bold&lt;/b&gt;" in alert
    capped = "x" * (PARAMETER_NAME_MAX - 1) + "…"
    assert error_names(alert) == [("", "<b>bold</b>"), ("", capped)]
    assert "x" * PARAMETER_NAME_MAX not in alert


def test_it_names_the_first_few_of_many_and_counts_the_rest(client_in: Client) -> None:
    sent = [f"extra{i}" for i in range(PARAMETERS_NAMED + 3)]
    page = client_in.get("/pods/", dict.fromkeys(sent, "1")).content.decode()
    assert error_names(page) == [("", name) for name in sent[:PARAMETERS_NAMED]]
    assert '<li id="unknown-more">and 3 more parameters that are not filters</li>' in page
    one_more = client_in.get("/pods/", dict.fromkeys(sent[: PARAMETERS_NAMED + 1], "1")).content.decode()
    assert '<li id="unknown-more">and 1 more parameter that is not a filter</li>' in one_more
    assert "unknown-more" not in client_in.get("/pods/", {"extra": "1"}).content.decode()


def test_a_refused_value_and_a_parameter_that_is_no_filter_are_both_named(client_in: Client) -> None:
    page = client_in.get("/claims/", {"state": "sleeping", "stat": "pending"}).content.decode()
    assert error_names(page) == [("State", "state"), ("", "stat")]
    assert page_filters(page)[0] == ("Search", "q")
    only_value = client_in.get("/claims/", {"state": "sleeping"}).content.decode()
    assert 'id="page-filters"' not in only_value  # every parameter is a filter: nothing to list
