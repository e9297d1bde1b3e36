"""The what-if answer's subject ("ResourceClaim default/<name>") wraps inside its panel at phone width: a
claim name of three 60-letter parts ran past the screen's edge, cut off, and could not be read whole."""

from __future__ import annotations

from typing import Any

import pytest

from allocation.services import whatif_run_create, whatif_run_execute
from tests.allocation import whatif_objects as o
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CLAIM = "-".join(letter * 60 for letter in "abc")


@pytest.fixture
def run(viewer: Any) -> str:
    claim = o.claim(CLAIM)
    claim["metadata"]["uid"] = (
        "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"  # a real uid's length (the name is long)
    )
    o.store(*o.small_cluster().values(), claim)
    answer = whatif_run_create(
        kind="feasibility",
        input={"source": "pick", "kind": "ResourceClaim", "namespace": "default", "name": CLAIM},
        user=viewer,
    )
    whatif_run_execute(run_id=str(answer.id))
    return str(answer.id)


def test_a_long_subject_wraps_inside_its_panel_at_390_px(
    run: str, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 900})
    log_in(page, asgi_server, viewer.username, start=f"/whatif/{run}/")
    label = page.locator("#subject > strong")
    assert CLAIM in label.inner_text()  # whole, not cut short
    panel = page.locator("#subject").bounding_box()
    box = label.evaluate(
        "(el) => { const r = document.createRange(); r.selectNodeContents(el);"
        " return Math.max(...Array.from(r.getClientRects()).map((b) => b.right)); }"
    )
    assert panel and box <= panel["x"] + panel["width"], (box, panel)
