"""A maintenance's page as a user (and a screen reader) reads it: it leads back to the Maintenance list as
every other detail page leads back to its list; the eviction counts are announced as they change; and the
NoSchedule and NoExecute forms' confirmations say which effect each confirms, instead of two identically
named "I have reviewed this blast radius" checkboxes and "type 3 to confirm" boxes."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from maintenance.planning import DeviceRef
from tests.form_labels import form_label
from tests.inventory import factories as f
from tests.maintenance.support import GPU, create, preview_now
from tests.maintenance.test_detail_error_labels import busiest_node_gpus, form_of

pytestmark = pytest.mark.django_db


def a_draft(operator: Any) -> Any:
    f.write(("resourceslices", f.resource_slice("node-0-gpu", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])))
    return create(operator, devices=[DeviceRef(GPU, "node-0", "gpu-0"), DeviceRef(GPU, "node-0", "gpu-1")])


def test_the_page_leads_back_to_the_maintenance_list(operator: Any, operator_client: Client) -> None:
    m = a_draft(operator)

    page = operator_client.get(f"/maintenance/{m.id}/").content.decode()

    crumbs = page.split("<h1")[0].split("<main")[-1]
    assert '<p class="muted"><a href="/maintenance/">Maintenance</a></p>' in crumbs


def test_screen_readers_hear_the_eviction_counts_as_they_change(
    operator: Any, operator_client: Client
) -> None:
    m = a_draft(operator)

    page = operator_client.get(f"/maintenance/{m.id}/").content.decode()

    counts = re.search(r'<p id="progress-counts"[^>]*>', page)
    assert counts, "the page has no eviction counts line"
    assert 'aria-live="polite"' in counts.group(0) and 'aria-atomic="true"' in counts.group(0)
    table = re.search(r'<table[^>]*id="progress-pods"[^>]*>', page)
    assert table and "aria-live" not in table.group(0)  # the counts speak, not every redrawn row


def test_each_enforce_forms_confirmation_names_its_effect(
    mirrored: Any, operator: Any, operator_client: Client
) -> None:
    m = create(operator, devices=busiest_node_gpus(mirrored))
    preview_now(m, operator)

    page = operator_client.get(f"/maintenance/{m.id}/").content.decode()

    no_schedule, no_execute = (
        form_of(page, "enforce-NoSchedule-form"),
        form_of(page, "enforce-NoExecute-form"),
    )
    assert form_label(no_schedule, "confirm") == "I have reviewed the NoSchedule blast radius"
    assert form_label(no_execute, "confirm") == "I have reviewed the NoExecute blast radius"
    assert form_label(no_execute, "typed") == "To confirm NoExecute, type"
    # the typed box is named by its visible label (and the phrase in it), not by an aria-label over it
    assert not re.search(r'<input[^>]*name="typed"[^>]*aria-label', page)
