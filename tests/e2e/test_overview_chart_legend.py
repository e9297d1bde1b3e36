"""The Overview's availability chart at phone width: every legend entry is drawn whole inside the chart (a long
entry ran off the canvas's edge at 390 px, cut mid-word), and what "not allocatable" means is said below it."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [390, 1440])
def test_every_legend_entry_fits_inside_the_chart(
    width: int, mirror: MirrorHandle, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/")
    page.wait_for_function("document.getElementById('class-chart').width > 0")
    overflow = page.evaluate("""() => {
        const chart = window.Chart.getChart(document.getElementById("class-chart"));
        return chart.legend.legendHitBoxes.map((box, i) => ({
            text: chart.legend.legendItems[i].text, right: box.left + box.width, width: chart.width,
        })).filter((item) => item.right > item.width);
    }""")  # fmt: skip
    assert overflow == []
    assert "untolerated taint" in page.inner_text("#chart-note")
