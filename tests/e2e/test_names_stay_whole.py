"""Names in tables stay whole: at 390 px a squeezed column broke "worker-0006" at its hyphen ("worker-" /
"0006") and "trainer-0001-gpu" into three lines; the Devices table cut node names off at its column's edge.
A name (a word, dradash_format.WORD_MAX) now keeps its line and its table scrolls sideways in its box; only a
longer unbroken string wraps, and in the Devices table a long claim or pod name where the table would
otherwise not fit a desktop screen (test_devices_age: the table fits at 1280 px)."""

from __future__ import annotations

from typing import Any

import pytest

from dradash.templatetags.dradash_format import WORD_MAX
from tests.e2e.browser_helpers import log_in
from tests.inventory import factories as f

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NODES = 7
LONG_CLAIM = "checkpoint" * 9  # 90 characters, no hyphen: longer than a word

#: "where: text⏎rest" for every short token (no whitespace, at most WORD_MAX characters) of a table cell that
#: is not on one line, and every cell whose content is cut off at its edge
BROKEN = r"""() => {
  const found = [];
  const cells = document.querySelectorAll("table.t td, .tabulator-cell");
  cells.forEach((cell) => {
    if (!cell.getClientRects().length) return;
    const where = (cell.closest("table, .tabulator").id || "table");
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent;
      const re = /\S+/g;
      for (let m = re.exec(text); m; m = re.exec(text)) {
        if (m[0].length > WORD_MAX) continue;
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) found.push(where + ": " + m[0] + " on " + tops.size + " lines");
      }
    }
    if (cell.classList.contains("tabulator-cell") && cell.scrollWidth > cell.clientWidth + 1) {
      found.push(where + ": cut off: " + cell.textContent.trim().slice(0, 40));
    }
  });
  return found;
}""".replace("WORD_MAX", str(WORD_MAX))


def pod(name: str, node: str, claim: str) -> tuple[str, dict[str, Any]]:
    spec = {
        "containers": [{"name": "main"}],
        "nodeName": node,
        "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
    }
    meta = f.meta(name, namespace="ml-team-a")
    return (
        "pods",
        {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Running"}},
    )


@pytest.fixture
def world(viewer: Any) -> None:
    """Nodes worker-0001…, a GPU slice each, a claim and its pod per node, and one claim with a long name."""
    objs: list[tuple[str, dict[str, Any]]] = [("deviceclasses", f.device_class("gpu.example.com"))]
    for i in range(1, NODES + 1):
        node, trainer = f"worker-{i:04d}", f"trainer-{i:04d}"
        objs += [
            ("nodes", f.node(node)),
            ("resourceslices", f.resource_slice(f"slice-{i}", pool=node, node=node, devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])),
            ("resourceclaims", f.claim(f"{trainer}-gpu", namespace="ml-team-a", results=[f.result("gpu-0", pool=node)],
                                       reserved_for=[{"resource": "pods", "name": trainer, "uid": f.uid()}])),
            pod(trainer, node, f"{trainer}-gpu"),
        ]  # fmt: skip
    objs.append(("resourceclaims", f.claim(LONG_CLAIM, namespace="ml-team-a")))
    f.write(*objs)


def test_names_in_tables_stay_whole_and_tables_scroll_at_phone_width(
    world: None, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/")
    broken: dict[str, list[str]] = {}
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        for path in ("/devices/", "/nodes/", "/pods/", "/claims/"):
            page.goto(f"{asgi_server}{path}")
            page.wait_for_load_state("networkidle")
            if path == "/devices/":
                page.wait_for_selector(".tabulator-row")
            found = page.evaluate(BROKEN)
            if found:
                broken[f"{path} at {width}"] = found
            assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{path} at {width}"
    assert broken == {}

    # A string longer than a word still wraps (inside its 64ch), rather than stretching its column.
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{asgi_server}/claims/")
    long_name = page.locator("#claims-table td bdi.k8s", has_text=LONG_CLAIM)
    assert len(long_name.evaluate("(el) => Array.from(el.getClientRects())")) >= 1
    assert long_name.evaluate("(el) => el.getBoundingClientRect().height") > 30  # more than one line
