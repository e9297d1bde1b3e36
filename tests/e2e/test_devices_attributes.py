"""A device's attributes in the Devices table (a column the chooser shows): a list-typed attribute's elements
each a chip, "a,b" one element; a row grows to hold them when the column is shown."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in
from tests.kubectl import run_kubectl

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SLICE_YAML = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-0-lists}
spec:
  driver: lists.example.com
  nodeName: node-0
  pool: {name: node-0-lists, generation: 1, resourceSliceCount: 1}
  devices:
    - name: fpga-0
      attributes:
        labels: {strings: ["a,b", "c"]}
        reachableNuma: {strings: [numa0, numa1]}
        model: {string: "X1, rev 2"}
"""


def test_the_attributes_column_shows_each_list_element_and_the_row_holds_them(
    simcluster: Any, mirror: MirrorHandle, viewer: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    result = run_kubectl(simcluster.kubeconfig_path, "apply", "-f", "-", input_text=SLICE_YAML)
    assert result.returncode == 0, result.stderr
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/devices/?driver=lists.example.com")
    row = page.locator('.tabulator-row[data-device="lists.example.com/node-0-lists/fpga-0"]')
    expect(row).to_be_visible(timeout=15_000)
    cell = row.locator(".tabulator-cell[tabulator-field=attributes]")
    expect(cell).to_be_hidden()  # hidden by default

    page.locator("#device-columns summary").click()
    page.locator("#device-columns label", has_text="Attributes").locator("input").check()
    expect(cell).to_be_visible()
    labels = cell.locator(".attr-line", has_text="labels").locator(".attr-list .badge")
    expect(labels).to_have_text(["a,b", "c"])
    expect(cell.locator(".attr-line", has_text="model")).to_have_text("model: X1, rev 2")
    # The row is as tall as the cell's lines: the last one is inside it, not drawn over the next row.
    last = cell.locator(".attr-line").last.bounding_box()
    box = row.bounding_box()
    assert last and box and last["y"] + last["height"] <= box["y"] + box["height"] + 1, (last, box)


RTL_SLICE_YAML = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-0-rtl}
spec:
  driver: rtl.example.com
  nodeName: node-0
  pool: {name: node-0-rtl, generation: 1, resourceSliceCount: 1}
  devices:
    - name: gpu-0
      attributes:
        model: {string: "\\u202eevil"}
        serial: {string: "s-1"}
"""


def test_an_attribute_value_with_a_right_to_left_override_is_isolated_in_its_line(
    simcluster: Any, mirror: MirrorHandle, viewer: User, asgi_server: str, browser: Any
) -> None:
    """A driver's string (U+202E, never closed) is a <bdi> of its own, as the server-rendered pages' |k8s
    makes it: it was a plain span, so the override ran on over the rest of the cell."""
    from playwright.sync_api import expect

    result = run_kubectl(simcluster.kubeconfig_path, "apply", "-f", "-", input_text=RTL_SLICE_YAML)
    assert result.returncode == 0, result.stderr
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/devices/?driver=rtl.example.com")
    row = page.locator('.tabulator-row[data-device="rtl.example.com/node-0-rtl/gpu-0"]')
    expect(row).to_be_visible(timeout=15_000)
    page.locator("#device-columns summary").click()
    page.locator("#device-columns label", has_text="Attributes").locator("input").check()
    line = row.locator(".tabulator-cell[tabulator-field=attributes] .attr-line", has_text="model")
    expect(line.locator("bdi")).to_have_text(["model", "\u202eevil"])
    expect(line).to_have_text("model: \u202eevil")
