"""The headroom answer's two tables (per DeviceClass, per node) each sit under their own heading, apart:
they looked glued together, one table."""

from __future__ import annotations

from typing import Any

import pytest

from allocation.services import whatif_run_create, whatif_run_execute
from tests.allocation import whatif_objects as o
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: for each table of the answer: the text of the heading right above it, and the room between the two
LAYOUT = """() => {
  const box = (el) => el.closest(".table-wrap, .table-scroll") || el;
  const classes = document.getElementById("headroom-classes");
  const nodes = document.getElementById("headroom-nodes");
  const heading = (el) => { const h = box(el).previousElementSibling; return h && /^H[2-4]$/.test(h.tagName) ? h.textContent.trim() : ""; };
  return {
    classes: heading(classes),
    nodes: heading(nodes),
    gap: Math.round(nodes.getBoundingClientRect().top - box(classes).getBoundingClientRect().bottom),
  };
}"""


@pytest.fixture
def run(viewer: Any) -> str:
    """A headroom answer, computed before the browser starts (its event loop owns the thread)."""
    o.store(*o.small_cluster().values())
    answer = whatif_run_create(
        kind="headroom", input={"source": "class", "deviceClassName": o.DRIVER, "count": 1}, user=viewer
    )
    whatif_run_execute(run_id=str(answer.id))
    answer.refresh_from_db()
    assert answer.state == "succeeded", answer.error
    return str(answer.id)


@pytest.mark.parametrize("width", [1440, 390])
def test_the_headroom_tables_each_have_a_heading_and_room(
    run: str, viewer: Any, asgi_server: str, browser: Any, width: int
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    log_in(page, asgi_server, viewer.username, start=f"/whatif/{run}/")
    page.wait_for_selector("#headroom-nodes")
    layout = page.evaluate(LAYOUT)
    assert layout["classes"] == "Devices the copies would use, per DeviceClass"
    assert layout["nodes"] == "Copies per node"
    assert layout["gap"] >= 24, layout  # a heading's height and its margins, not a shared border
