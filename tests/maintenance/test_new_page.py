"""The New maintenance page selects nothing until the operator does; "all N matching" is an explicit
choice that shows N and the nodes and drivers it spans; a filter it does not know selects nothing."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.test import Client

from inventory.models import Device
from maintenance.models import Maintenance

pytestmark = pytest.mark.django_db

TAINT = {"title": "t", "reason": "r", "key": "example.com/maintenance", "value": "", "effect": "NoExecute"}


def test_it_selects_nothing_until_the_operator_does(mirrored: Any, operator_client: Client) -> None:
    page = operator_client.get("/maintenance/new/").content.decode()
    total = Device.objects.count()
    assert (
        f"<strong>{total}</strong> devices match (no filter is set: this is every device in the cluster)"
        in page
    )
    assert "Nothing is selected yet" in page
    assert not re.search(r"<input[^>]*checked", page), "no checkbox or radio is pre-selected"
    assert "They span <strong>3</strong> nodes (node-0, node-1, node-2)" in page
    assert "2 drivers (gpu.example.com, nic.example.com)" in page

    response = operator_client.post("/maintenance/new/", TAINT)
    assert response.status_code == 400 and "nothing is selected" in response.content.decode()
    assert not Maintenance.objects.exists()


def test_it_selects_all_matching_only_when_asked_and_only_the_count_shown(
    mirrored: Any, operator_client: Client
) -> None:
    total = Device.objects.count()
    stale = operator_client.post(
        "/maintenance/new/", {**TAINT, "select_all": "yes", "matching_count": total - 1}
    )
    assert stale.status_code == 400 and "not the" in stale.content.decode()
    assert not Maintenance.objects.exists()
    response = operator_client.post(
        "/maintenance/new/", {**TAINT, "select_all": "yes", "matching_count": total}
    )
    assert response.status_code == 302
    assert Maintenance.objects.get().device_count == total


def test_it_creates_a_draft_from_ticked_devices(mirrored: Any, operator_client: Client) -> None:
    response = operator_client.post(
        "/maintenance/new/?node=node-1", {**TAINT, "device": ["gpu.example.com|node-1|gpu-0"]}
    )
    assert response.status_code == 302
    m = Maintenance.objects.get()
    assert m.devices == [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]
    assert m.filters == {"node": "node-1"}


def test_it_refuses_a_filter_it_does_not_know(mirrored: Any, operator_client: Client) -> None:
    page = operator_client.get("/maintenance/new/?nod=node-0")
    html = page.content.decode()
    assert "<li><code>nod</code>: not a filter of this page</li>" in html
    assert 'id="selection-table"' not in html and "select_all" not in html
    response = operator_client.post(
        "/maintenance/new/?nod=node-0", {**TAINT, "select_all": "yes", "matching_count": 1}
    )
    assert response.status_code == 400
    assert not Maintenance.objects.exists()


def test_every_devices_filter_the_out_of_service_button_carries_is_accepted(
    mirrored: Any, operator_client: Client
) -> None:
    """Devices → "Take these devices out of service" carries the Devices page's filters: a new maintenance
    uses every one of them (Allocatable, Taint, Claim, …) and selects what the Devices page showed."""
    from inventory.filters import DeviceFilterSet
    from inventory.selectors.devices import device_list

    devices = operator_client.get("/devices/?node=node-0&device_class=gpu.example.com&allocatable=yes")
    button = re.search(r'id="out-of-service" href="([^"]+)"', devices.content.decode())
    assert button is not None
    url = button.group(1).replace("&amp;", "&")
    assert "allocatable=yes" in url
    page = operator_client.get(url).content.decode()
    assert 'id="filter-errors"' not in page and "Unknown filter" not in page
    shown = device_list(
        filters={"node": "node-0", "device_class": "gpu.example.com", "allocatable": "yes"}
    ).count()
    assert shown and f"<strong>{shown}</strong> device{'s' if shown != 1 else ''} match" in page
    for name in DeviceFilterSet.base_filters:  # not one of them is unknown to a maintenance
        value = {"taint": "none", "state": "free", "health": "Healthy", "allocatable": "no",
                 "attribute": "model=x", "claim": "ns/c"}.get(name, "x")  # fmt: skip
        html = operator_client.get("/maintenance/new/", {name: value}).content.decode()
        assert "Unknown filter" not in html, name


def test_the_filter_form_offers_the_inventorys_drivers_classes_and_taint(
    mirrored: Any, operator_client: Client
) -> None:
    page = operator_client.get("/maintenance/new/?taint=none").content.decode()
    form = page.split('id="device-filters"')[1].split("</form>")[0]
    assert '<select name="driver">' in form and '<option value="gpu.example.com"' in form
    assert '<option value="nic.example.com"' in form
    assert '<select name="device_class">' in form
    assert '<select name="taint">' in form and '<option value="none" selected>untainted</option>' in form
    assert '<select name="allocatable">' in form


def test_ticks_of_one_page_say_they_are_not_all_matching_devices(
    mirrored: Any, operator_client: Client, monkeypatch: Any
) -> None:
    from maintenance import views

    monkeypatch.setattr(views, "SELECTION_PAGE_SIZE", 2)
    total = Device.objects.filter(driver="gpu.example.com").count()
    assert total > 4
    page = operator_client.get("/maintenance/new/?driver=gpu.example.com").content.decode()
    assert f'Select all <strong id="select-all-count">{total}</strong> devices matching these filters' in page
    assert "on every page, not only the 2 shown here" in page
    assert 'id="partial-selection"' in page and f'data-matching="{total}"' in page
    ticked = ["gpu.example.com|node-0|gpu-0", "gpu.example.com|node-0|gpu-1"]
    refused = operator_client.post(
        "/maintenance/new/?driver=gpu.example.com", {**TAINT, "title": "", "device": ticked}
    )
    assert refused.status_code == 400  # a form error: the page comes back with the warning shown
    html = refused.content.decode()
    assert f"Only the 2 ticked devices go into the draft: {total - 2} more match these filters" in html
    response = operator_client.post("/maintenance/new/?driver=gpu.example.com", {**TAINT, "device": ticked})
    assert response.status_code == 302
    detail = operator_client.get(response["Location"]).content.decode()
    assert f"2 of the {total} devices matching its filters" in detail
    assert "the others are not part of this maintenance" in detail


def test_select_all_is_bounded_by_the_device_limit(
    mirrored: Any, operator_client: Client, settings: Any
) -> None:
    settings.DRADASH_MAINTENANCE_MAX_DEVICES = 3
    page = operator_client.get("/maintenance/new/?driver=gpu.example.com").content.decode()
    assert 'id="select-all-over-limit"' in page and 'id="select-all"' not in page
    total = Device.objects.filter(driver="gpu.example.com").count()
    refused = operator_client.post("/maintenance/new/?driver=gpu.example.com",
                          {**TAINT, "select_all": "yes", "matching_count": total})  # fmt: skip
    assert refused.status_code == 400 and "DRADASH_MAINTENANCE_MAX_DEVICES" in refused.content.decode()


@pytest.mark.parametrize(
    ("sent", "beside"),
    [
        ("garbage", []),
        ("gpu.example.com/node-0/gpu-0", ["gpu.example.com|node-0|gpu-1"]),
        ("gpu.example.com||gpu-0", ["gpu.example.com|node-0|gpu-1"]),
        ("a|b|c|d", []),
    ],
)
def test_it_says_a_ticked_device_reference_is_malformed_not_that_nothing_is_selected(
    mirrored: Any, operator_client: Client, sent: str, beside: list[str]
) -> None:
    response = operator_client.post("/maintenance/new/", {**TAINT, "device": [*beside, sent]})
    assert response.status_code == 400
    errors = html.unescape(response.content.decode()).split('id="form-errors"')[1].split("</div>")[0]
    assert (
        f"<strong>Select devices</strong> (<code>device</code>): not a device reference: {sent!r}; "
        "expected driver|pool|device"
    ) in errors
    assert "nothing is selected" not in errors
    assert not Maintenance.objects.exists()


def test_it_says_a_ticked_device_the_inventory_does_not_have_is_unknown(
    mirrored: Any, operator_client: Client
) -> None:
    response = operator_client.post(
        "/maintenance/new/", {**TAINT, "device": ["gpu.example.com|node-0|gpu-99"]}
    )
    assert response.status_code == 400
    errors = html.unescape(response.content.decode()).split('id="form-errors"')[1].split("</div>")[0]
    assert "no device gpu.example.com/node-0/gpu-99 in the inventory" in errors
    assert not Maintenance.objects.exists()


@pytest.mark.parametrize(
    ("field", "label", "limit"),
    [("title", "Title", 200), ("reason", "Reason", 500), ("ticket", "Ticket", 100)],
)
def test_it_refuses_a_text_longer_than_it_stores_instead_of_cutting_it(
    mirrored: Any, operator_client: Client, field: str, label: str, limit: int
) -> None:
    ticked = {"device": ["gpu.example.com|node-0|gpu-0"]}
    response = operator_client.post("/maintenance/new/", {**TAINT, **ticked, field: "x" * (limit + 1)})
    assert response.status_code == 400
    errors = html.unescape(response.content.decode()).split('id="form-errors"')[1].split("</div>")[0]
    assert (
        f"<strong>{label}</strong> (<code>{field}</code>): Too long: may not be more than {limit} characters, "
        f"got {limit + 1}"
    ) in errors
    assert not Maintenance.objects.exists()
    assert (
        operator_client.post("/maintenance/new/", {**TAINT, **ticked, field: "y" * limit}).status_code == 302
    )
    assert getattr(Maintenance.objects.get(), field) == "y" * limit


@pytest.mark.parametrize(
    ("sent", "field"),
    [
        ({"title": "PSU\x00swap", "device": ["gpu.example.com|node-0|gpu-0"]}, "title"),
        ({"ticket": "\x00", "device": ["gpu.example.com|node-0|gpu-0"]}, "ticket"),
        ({"device": ["gpu.example.com|node-0|gpu-0\x00"]}, "device"),
    ],
)
def test_it_refuses_a_nul_character_in_a_draft(
    mirrored: Any, operator_client: Client, sent: dict[str, Any], field: str
) -> None:
    # The form field is named on the error page before the view runs (dradash's input guard).
    response = operator_client.post("/maintenance/new/", {**TAINT, **sent})
    assert response.status_code == 400
    assert f"<code>{field}</code>: must not contain the NUL character" in html.unescape(
        response.content.decode()
    )
    assert not Maintenance.objects.exists()


def test_it_names_a_refused_filter_once_when_the_form_is_sent(mirrored: Any, operator_client: Client) -> None:
    response = operator_client.post("/maintenance/new/?state=unallocated", TAINT)
    page = response.content.decode()
    assert response.status_code == 400
    assert page.count("unallocated is not one of the available choices") == 1
    assert 'id="filter-errors"' in page and 'id="form-errors"' not in page
    assert not Maintenance.objects.exists()


def test_it_counts_one_matching_device_in_english(mirrored: Any, operator_client: Client) -> None:
    device = Device.objects.order_by("driver", "pool", "name").first()
    assert device is not None
    uuid = next(iter(device.attributes["uuid"].values()))
    page = operator_client.get("/maintenance/new/", {"attribute": f"uuid={uuid}"}).content.decode()
    assert "<strong>1</strong> device matches." in page
    assert "<strong>1</strong> device match." not in page


def test_the_browser_stops_title_reason_and_ticket_at_the_lengths_the_server_refuses_past(
    mirrored: Any, operator_client: Client
) -> None:
    page = operator_client.get("/maintenance/new/").content.decode()
    for name, limit in (("title", 200), ("reason", 500), ("ticket", 100)):
        field = re.search(rf'<input name="{name}"[^>]*>', page)
        assert field is not None and f'maxlength="{limit}"' in field.group(0), name
        assert Maintenance._meta.get_field(name).max_length == limit
