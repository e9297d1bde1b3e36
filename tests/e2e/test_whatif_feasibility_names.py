"""The feasibility answer's table of nodes keeps names whole at phone width and links each node to its
page: at 390 px "node-a" and the claim "checkpoint-writer-gpu-…" broke at every hyphen, one piece a line,
and a node that fits was plain text."""

from __future__ import annotations

from typing import Any

import pytest

from allocation.services import whatif_run_create, whatif_run_execute
from tests.allocation import whatif_objects as o
from tests.e2e.browser_helpers import log_in
from tests.e2e.test_names_stay_whole import BROKEN

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CLAIM = "checkpoint-writer-gpu-njhqq-extended-resources-clvj4"


@pytest.fixture
def run(viewer: Any) -> str:
    """A feasibility answer, computed before the browser starts (its event loop owns the thread)."""
    o.store(*o.small_cluster().values(), o.claim(CLAIM))
    answer = whatif_run_create(
        kind="feasibility",
        input={"source": "pick", "kind": "ResourceClaim", "namespace": "default", "name": CLAIM},
        user=viewer,
    )
    whatif_run_execute(run_id=str(answer.id))
    answer.refresh_from_db()
    assert answer.state == "succeeded", answer.error
    return str(answer.id)


def test_the_nodes_that_fit_keep_their_names_whole_and_link_to_the_node(
    run: str, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 900})
    log_in(page, asgi_server, viewer.username, start=f"/whatif/{run}/")
    page.wait_for_selector("#feasible-nodes")
    assert page.evaluate(BROKEN) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    node = page.locator("#feasible-nodes tbody tr").first.locator("td").first
    assert node.get_by_role("link").get_attribute("href") == "/nodes/node-a/"
