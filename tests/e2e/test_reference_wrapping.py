"""The Devices table's claim and pod links in a real browser at a laptop's width: a long "namespace/name"
wraps after its slash or a hyphen, never mid-word ("default/lega cy-gpu-…" was hard to read)."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# For every claim or pod link: where its text moves to the next line, the character before the break.
BREAKS = """() => {
  const out = [];
  for (const a of document.querySelectorAll('.tabulator-cell[tabulator-field=claims] a, a.pod-link')) {
    let before = null, top = null;
    const walker = document.createTreeWalker(a, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.length; i++) {
        const range = document.createRange();
        range.setStart(node, i); range.setEnd(node, i + 1);
        const rect = range.getBoundingClientRect();
        if (top !== null && rect.top > top + 2) out.push({link: a.textContent, after: before});
        top = rect.top; before = node.data[i];
      }
    }
  }
  return out;
}"""


def test_claim_and_pod_links_wrap_after_a_slash_or_hyphen_never_mid_word(
    mirror: MirrorHandle, viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/devices/")
    expect(page.locator(".tabulator-cell[tabulator-field=claims] a").first).to_be_visible(timeout=15_000)
    breaks = page.evaluate(BREAKS)
    assert breaks, "no link wraps at 1280 px: the test shows nothing"
    assert [b for b in breaks if b["after"] not in ("/", "-")] == []
