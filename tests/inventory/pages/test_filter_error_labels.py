"""A refused filter is named by the label its field has on the page's form (then by its parameter), so the
user finds the field they set: "Allocation (state): …", not "state: …" beside a field labelled Allocation."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from inventory.filters import (
    CLAIM_FILTER_LABELS,
    DEVICE_FILTER_LABELS,
    NODE_FILTER_LABELS,
    POD_FILTER_LABELS,
    ClaimFilterSet,
    DeviceFilterSet,
    PodFilterSet,
)
from tests.form_labels import error_names, form_label
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db

#: (page, parameter, a value it refuses)
REFUSED = [
    ("/devices/", "state", "unallocated"),
    ("/devices/", "taint", "sometimes"),
    ("/devices/", "allocatable", "maybe"),
    ("/devices/", "health", "Sick"),
    ("/devices/", "attribute", "model"),
    ("/claims/", "state", "sleeping"),
    ("/claims/", "extended_resource", "maybe"),
    ("/pods/", "phase", "Sleeping"),
    ("/pods/", "uses_claims", "maybe"),
    ("/pods/", "waiting", "perhaps"),
]


@pytest.fixture
def client_in(client: Client) -> Client:
    client.force_login(make_user())
    return client


@pytest.mark.parametrize(("path", "name", "value"), REFUSED)
def test_a_refused_filter_is_named_by_its_label_on_the_form(
    client_in: Client, path: str, name: str, value: str
) -> None:
    response = client_in.get(path, {name: value})
    assert response.status_code == 400
    page = response.content.decode()
    assert error_names(page) == [(form_label(page, name), name)]


def test_a_parameter_that_is_no_filter_is_named_as_it_was_sent(client_in: Client) -> None:
    page = client_in.get("/nodes/", {"name": "node-1"}).content.decode()
    assert error_names(page) == [("", "name")]
    assert form_label(page, "q") == NODE_FILTER_LABELS["q"] == "Node"


@pytest.mark.parametrize(
    ("path", "labels", "filterset"),
    [
        ("/devices/", DEVICE_FILTER_LABELS, DeviceFilterSet),
        ("/claims/", CLAIM_FILTER_LABELS, ClaimFilterSet),
        ("/pods/", POD_FILTER_LABELS, PodFilterSet),
    ],
)
def test_every_filter_has_the_label_its_errors_use(
    client_in: Client, path: str, labels: dict[str, str], filterset: Any
) -> None:
    assert set(labels) == set(filterset.base_filters)  # a new filter needs its label
    page = client_in.get(path).content.decode()
    for name, label in labels.items():
        if name != "claim":  # the Devices form has no Claim field; a device's claim link sets it
            assert form_label(page, name) == label, name
