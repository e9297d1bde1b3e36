"""A claim name longer than 40 characters stays whole in a table at 390 px: the claim the scheduler makes for a
pod's extended resources ("trainer-7f9c-example-com-gpu-extended-resources-abcde", 53 characters) broke at its
hyphens into four lines in the Claims table, and so on the pages that list it. Kubernetes makes claim names of
up to 63 characters (a DNS label: the name of a template's claim and of an extended-resource claim is cut to
fit), so a name that long is a word (dradash_format.WORD_MAX) and its table scrolls in its box; the page
itself never gets wider than the screen. (A table read as cards at phone width, the Pods list, gives each
value a fixed width: there a long name wraps, as test_names_stay_whole says.)"""

from __future__ import annotations

from typing import Any

import pytest

from dradash.templatetags.dradash_format import WORD_MAX
from tests.e2e.browser_helpers import log_in
from tests.e2e.test_names_stay_whole import BROKEN
from tests.inventory import factories as f

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NAMESPACE = "ml-team-a"
POD = "trainer-7f9c"
CLAIM = "trainer-7f9c-example-com-gpu-extended-resources-abcde"
#: as long as a name Kubernetes generates for a claim gets (63 characters)
LONGEST = "checkpoint-writer-7f9c4-gpu-extended-resources-2026-12-03-x7k2p"
NODE = "worker-0001"

#: each line box of the element's text (a name broken at a hyphen has more than one)
LINES = """(el) => {
  const range = document.createRange();
  range.selectNodeContents(el);
  return new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
}"""


@pytest.fixture
def world(viewer: Any) -> None:
    """A GPU on worker-0001 held by the scheduler's extended-resource claim of pod trainer-7f9c."""
    owner = {"resource": "pods", "name": POD, "uid": f.uid()}
    claim = f.claim(
        CLAIM, namespace=NAMESPACE, results=[f.result("gpu-0", pool=NODE)], reserved_for=[owner], owner_pod=POD,
        annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
    )  # fmt: skip
    spec = {
        "nodeName": NODE,
        "containers": [{"name": "main", "resources": {"limits": {"example.com/gpu": "1"}}}],
    }
    status = {
        "phase": "Running",
        "extendedResourceClaimStatus": {
            "resourceClaimName": CLAIM,
            "requestMappings": [
                {
                    "containerName": "main",
                    "resourceName": "example.com/gpu",
                    "requestName": "container-0-request-0",
                }
            ],
        },
    }
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": f.meta(POD, namespace=NAMESPACE), "spec": spec,
           "status": status}  # fmt: skip
    f.write(
        ("deviceclasses", f.device_class("gpu.example.com")),
        ("nodes", f.node(NODE)),
        (
            "resourceslices",
            f.resource_slice("slice-1", pool=NODE, node=NODE, devices=[f.gpu("gpu-0"), f.gpu("gpu-1")]),
        ),
        ("resourceclaims", claim),
        ("resourceclaims", f.claim(LONGEST, namespace=NAMESPACE, results=[f.result("gpu-1", pool=NODE)])),
        ("pods", pod),
    )


def test_a_long_claim_name_stays_on_one_line_in_tables_at_phone_width(
    world: None, viewer: Any, asgi_server: str, browser: Any
) -> None:
    assert 40 < len(CLAIM) < len(LONGEST) == 63 <= WORD_MAX
    page = browser.new_page(viewport={"width": 390, "height": 844})
    log_in(page, asgi_server, viewer.username, start="/claims/")
    claim_page = f"/claims/{NAMESPACE}/{CLAIM}/"
    where = {
        "/claims/": [
            f"#claims-table td a[href='{claim_page}'] bdi",
            "#claims-table td bdi.k8s >> text=" + LONGEST,
        ],
        f"/pods/{NAMESPACE}/{POD}/": [f"main table td a[href='{claim_page}'] bdi"],
        f"/nodes/{NODE}/": [f"main table td a[href='{claim_page}'] bdi"],
        f"/devices/gpu.example.com/{NODE}/gpu-0/": [f"main table td a[href='{claim_page}'] bdi"],
        # "ml-team-a/" and a 63-character name: longer than a word together, each part kept whole
        f"/devices/gpu.example.com/{NODE}/gpu-1/": [
            f"main table td a[href='/claims/{NAMESPACE}/{LONGEST}/'] .word >> nth=-1"
        ],
        "/devices/": [
            f".tabulator-cell[tabulator-field='claims'] a[href='{claim_page}'] .word >> nth=-1",
            ".tabulator-cell[tabulator-field='claims'] .word >> text=" + LONGEST,
        ],
    }
    lines: dict[str, int] = {}
    for path, selectors in where.items():
        page.goto(f"{asgi_server}{path}")
        page.wait_for_load_state("networkidle")
        for selector in selectors:
            name = page.locator(selector).first
            name.wait_for()
            lines[f"{path} {selector}"] = name.evaluate(LINES)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, (
            path
        )  # the table scrolls, not the page
    assert lines == dict.fromkeys(lines, 1)

    # The Devices table gives the Claim column the width its names need: none is cut off at its edge.
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{asgi_server}/devices/")
        page.wait_for_selector(".tabulator-row")
        page.wait_for_load_state("networkidle")
        cut = page.evaluate(
            """() => Array.from(document.querySelectorAll(".tabulator-cell[tabulator-field='claims']"))
                 .filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent.trim())"""
        )
        assert cut == [], width
    page.set_viewport_size({"width": 390, "height": 844})

    # The claim's own page: its name heads the page (a heading may wrap); in its tables, and in those of the
    # pages that show it, no name breaks.
    broken: dict[str, list[str]] = {}
    for path in (claim_page, *where):
        page.goto(f"{asgi_server}{path}")
        page.wait_for_load_state("networkidle")
        if found := page.evaluate(BROKEN):
            broken[path] = found
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
    assert broken == {}, broken
    page.goto(f"{asgi_server}{claim_page}")
    assert page.locator("h1 bdi.k8s").first.text_content() == CLAIM
