"""Tables in a real browser at phone and desktop widths: no word breaks between two letters or digits to
squeeze a column ("legac y-01", "Runnin g", "YA ML"), and at 390 px no table is cut off at the panel's edge:
it reads as cards (class="stack") or scrolls in a box of its own."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.mirror.runner import MirrorHandle
from inventory.models import Device
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: (where, the text) of every line break inside a word of a table cell: between two letters or digits
MID_WORD_BREAKS = r"""() => {
  const found = [];
  const alnum = /[A-Za-z0-9]/;
  document.querySelectorAll("table.t td").forEach((td) => {
    if (!td.getClientRects().length) return;  // hidden column
    // A table read as cards (class="stack" at phone width) wraps a token longer than its card (a CEL
    // expression, a 50-character resource name); short names and status words still never break.
    const card = getComputedStyle(td).display === "block";
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent;
      let top = null;
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) continue;
        const word = (text.slice(0, i).split(/\s/).pop() || "") + (text.slice(i).split(/\s/)[0] || "");
        if (card && word.length > 30) { top = rect.top; continue; }
        if (top !== null && rect.top > top + 2 && i > 0 && alnum.test(text[i - 1]) && alnum.test(text[i])) {
          found.push((td.closest("table").id || "table") + ": " + text.slice(Math.max(0, i - 30), i) + "⏎" + text.slice(i, i + 10));
        }
        top = rect.top;
      }
    }
  });
  return found;
}"""

#: tables whose right edge is past their scroll box's or the viewport's, with nothing to scroll them
CLIPPED = """() => {
  const bad = [];
  document.querySelectorAll("table.t").forEach((t) => {
    if (!t.getClientRects().length) return;
    const box = t.closest(".table-scroll, .table-wrap");
    if (!box) { bad.push((t.id || t.className) + ": in no scroll box"); return; }
    if (box.getBoundingClientRect().right > document.documentElement.clientWidth + 1) bad.push(t.id + ": box too wide");
  });
  return bad;
}"""


@pytest.fixture
def node_name(mirror: MirrorHandle) -> str:
    """A node with devices (looked up before the browser starts: its loop owns the thread)."""
    device = Device.objects.exclude(node_name="").order_by("driver", "pool", "name").first()
    assert device is not None
    return device.node_name


def test_no_word_breaks_inside_and_no_table_is_clipped(
    node_name: str, viewer: Any, asgi_server: str, browser: Any
) -> None:
    pages = ["/", "/classes/", "/nodes/", f"/nodes/{node_name}/", "/claims/", "/pods/", "/taint-rules/"]
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/")
    broken: list[str] = []
    clipped: list[str] = []
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for path in pages:
            page.goto(f"{asgi_server}{path}")
            page.wait_for_load_state("networkidle")
            broken += [f"{path} at {width} px: {b}" for b in page.evaluate(MID_WORD_BREAKS)]
            clipped += [f"{path} at {width} px: {c}" for c in page.evaluate(CLIPPED)]
    assert broken == [], "\n".join(broken)
    assert clipped == [], "\n".join(clipped)
    # At 390 px the overview's class table reads as cards: its Free and Fit together figures are on screen.
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{asgi_server}/")
    page.wait_for_load_state("networkidle")
    for testid in ("free", "headroom"):
        cell = page.locator(f'#class-summary td[data-testid="{testid}"]').first
        box = cell.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, (testid, box)
        assert cell.evaluate("c => getComputedStyle(c, '::before').content").strip('"') in (
            "Free",
            "Fit together",
        )


@pytest.fixture
def maintenance(transactional_db: None) -> Any:
    from maintenance.models import Maintenance

    return Maintenance.objects.create(
        title="Firmware update on worker-07", reason="PSU", taint_key="example.com/maintenance",
        taint_value="firmware", target_effect="NoExecute", state="applied", applied_effect="NoExecute",
        device_count=8, rule_count=1,
    )  # fmt: skip


def test_the_maintenance_list_reads_as_cards_at_phone_width(
    maintenance: Any, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/maintenance/")
    state = page.locator("#maintenance-table td", has_text="applied · NoExecute")
    box = state.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, box  # on screen, no sideways scroll
    assert state.evaluate("c => getComputedStyle(c, '::before').content").strip('"') == "State"
    assert page.evaluate(MID_WORD_BREAKS) == []


def test_the_what_if_pickers_keep_their_choices_on_one_row_at_phone_width(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/whatif/")
    rows = page.evaluate(
        """() => Array.from(document.querySelectorAll('.segmented')).filter((s) => s.getClientRects().length)
             .map((s) => new Set(Array.from(s.querySelectorAll('label')).map((l) => Math.round(l.getBoundingClientRect().top))).size)"""
    )
    assert rows and all(n == 1 for n in rows), rows  # a choice wrapped alone onto a second row
