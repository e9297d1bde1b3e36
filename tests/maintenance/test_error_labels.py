"""New maintenance and the Audit log name a refused field by the label the user sees on the form, then by
the path the server knows it by: "Allocation (filters.state)", never "filters.state" beside a field
labelled Allocation. The REST API keeps the path alone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from inventory.filters import DEVICE_FILTER_LABELS
from inventory.models import Device
from maintenance.selectors import AUDIT_FILTER_LABELS
from maintenance.views import NEW_LABELS
from tests.form_labels import error_names, form_label, page_filters

pytestmark = pytest.mark.django_db

TAINT = {"title": "t", "reason": "r", "key": "example.com/maintenance", "value": "", "effect": "NoExecute"}

#: a value each refusable device filter refuses
REFUSED_FILTERS = {
    "state": "unallocated",
    "taint": "sometimes",
    "allocatable": "maybe",
    "health": "Sick",
    "attribute": "model",
}


@pytest.mark.parametrize(("name", "value"), REFUSED_FILTERS.items())
def test_a_refused_filter_is_named_by_its_label_on_the_form(
    operator_client: Client, name: str, value: str
) -> None:
    response = operator_client.get("/maintenance/new/", {name: value})
    assert response.status_code == 200  # the page draws; it selects nothing and says why
    page = response.content.decode()
    panel = page.split('id="filter-errors"')[1].split("</div>")[0]
    assert error_names(panel) == [(form_label(page, name), f"filters.{name}")]
    assert form_label(page, name) == DEVICE_FILTER_LABELS[name]


def test_the_api_still_names_the_path(operator_client: Client) -> None:
    response = operator_client.post(
        "/api/maintenance/",
        json.dumps({**TAINT, "filters": {"state": "unallocated"}}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["filters.state"]


@pytest.mark.parametrize(
    ("sent", "field", "name"),
    [
        ({"title": "x" * 201}, "title", "title"),
        ({"key": "bad key!"}, "taint.key", "key"),
        ({"effect": "Sometimes"}, "taint.effect", "effect"),
    ],
)
def test_a_refused_form_field_is_named_by_its_label(
    operator_client: Client, sent: dict[str, str], field: str, name: str
) -> None:
    response = operator_client.post("/maintenance/new/", {**TAINT, **sent, "device": ["d|p|gpu-0"]})
    assert response.status_code == 400
    page = response.content.decode()
    panel = page.split('id="form-errors"')[1].split("</div>")[0]
    assert (form_label(page, name), field) in error_names(panel)
    assert form_label(page, name) == NEW_LABELS[field]


def test_a_stale_select_all_count_is_named_by_the_select_all_label(
    mirrored: Any, operator_client: Client
) -> None:
    # the page showed N matching devices; the cluster has changed since: the refusal names the choice the
    # user made ("Select all"), not only the API's path
    response = operator_client.post(
        "/maintenance/new/", {**TAINT, "select_all": "yes", "matching_count": Device.objects.count() + 1}
    )
    assert response.status_code == 400
    page = response.content.decode()
    panel = page.split('id="form-errors"')[1].split("</div>")[0]
    assert error_names(panel) == [(form_label(page, "select_all"), "expected_count")]
    assert form_label(page, "select_all") == "Select all"


@pytest.mark.parametrize(("name", "value"), [("action", "exploded"), ("source", "moon"), ("since", "soon")])
def test_the_audit_log_names_a_refused_filter_by_its_label(
    operator_client: Client, name: str, value: str
) -> None:
    response = operator_client.get("/maintenance/audit/", {name: value})
    assert response.status_code == 400
    page = response.content.decode()
    assert error_names(page) == [(form_label(page, name), name)]
    assert form_label(page, name) == AUDIT_FILTER_LABELS[name]


def test_the_audit_log_names_a_parameter_that_is_no_filter_and_its_filters_by_label(
    operator_client: Client,
) -> None:
    response = operator_client.get("/maintenance/audit/", {"actr": "olivia", "action": "nuke"})
    assert response.status_code == 400
    page = response.content.decode()
    assert error_names(page) == [("Action", "action"), ("", "actr")]
    assert "<li><code>actr</code>: not a filter of this page</li>" in page
    assert page_filters(page) == list((label, name) for name, label in AUDIT_FILTER_LABELS.items())
    assert [form_label(page, name) for _, name in page_filters(page)] == list(AUDIT_FILTER_LABELS.values())
    assert "supported are" not in page  # not the raw list of parameters (the API's message keeps it)


def test_every_device_filter_of_the_form_has_its_devices_page_label(operator_client: Client) -> None:
    page = operator_client.get("/maintenance/new/", {"claim": "ns/c"}).content.decode()
    for name, label in DEVICE_FILTER_LABELS.items():
        assert form_label(page, name) == label, name


def test_it_names_an_unknown_filter_as_it_was_sent_with_the_filters_it_takes(
    operator_client: Client, db: Any
) -> None:
    page = operator_client.get(
        "/maintenance/new/", {"nod": "node-0", "state": "unallocated"}
    ).content.decode()
    panel = page.split('id="filter-errors"')[1].split("</div>")[0]
    assert error_names(panel) == [("", "nod")]  # what was sent, as the Devices page names it
    assert "<li><code>nod</code>: not a filter of this page</li>" in panel
    assert page_filters(panel) == [(label, name) for name, label in DEVICE_FILTER_LABELS.items()]
    assert "supported filters are" not in panel  # not the raw list (the API's message keeps it)
