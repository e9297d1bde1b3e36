"""Upgrade manifests in a real browser: a viewer pastes v1.33-era YAML and sees each converted document
side by side. With DRADASH_SCREENSHOTS=1 the page is also saved to docs/screenshots/ at 1440 and 390 px."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in
from tests.migration.conftest import FIXTURES

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def test_it_shows_the_pasted_manifest_converted_side_by_side(
    asgi_server: str, viewer: Any, browser: Any, tmp_path: Path
) -> None:
    text = (FIXTURES / "mixed.yaml").read_text() + "---\n" + (FIXTURES / "v1beta1-templates.yaml").read_text()
    for width in (1440, 390):
        page = browser.new_page(viewport={"width": width, "height": 900})
        log_in(page, asgi_server, viewer.username, start="/migration/upgrade/")
        page.fill("#upgrade-yaml", text)
        page.click("#upgrade-submit")
        page.wait_for_selector("#upgrade-result")
        doc = page.locator("#doc-2")
        assert "ResourceClaimTemplate" in doc.locator("h2").inner_text()
        if width > 700:  # side by side
            added = doc.locator("tr.added td.new, tr.changed td.new").all_inner_texts()
            removed = doc.locator("tr.changed td.old").all_inner_texts()
        else:  # one column: the side-by-side table is hidden
            assert not doc.locator("table.sbs").is_visible()
            added = [t[2:] for t in doc.locator("pre.unified .added").all_inner_texts()]
            removed = [t[2:] for t in doc.locator("pre.unified .removed").all_inner_texts()]
        assert any(line.strip() == "exactly:" for line in added), (width, added)
        assert "apiVersion: resource.k8s.io/v1beta1" in removed
        assert page.locator("#download").get_attribute("download") == "manifests.v1.yaml"
        assert page.locator("#kept .badge").count() == 2  # the Namespace and the Pod
        shot = tmp_path / f"migration-upgrade-{width}.png"
        page.locator("#upgrade-form").scroll_into_view_if_needed()
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        if os.environ.get("DRADASH_SCREENSHOTS") == "1":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"migration-upgrade-{width}.png"), full_page=width != 1440)
        page.close()


def test_the_or_before_the_upload_stays_on_its_labels_line(
    asgi_server: str, viewer: Any, browser: Any
) -> None:
    """ "or" is outside the upload's label (errors name the field "Upload a file (file)"): at 390 px it
    stayed behind on a line of its own."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    log_in(page, asgi_server, viewer.username, start="/migration/upgrade/")
    tops = page.evaluate(
        """() => [document.querySelector("#upgrade-form .or"), document.querySelector("#upgrade-form input[name=file]").closest("label")]
                 .map((el) => Math.round(el.getClientRects()[0].top))"""
    )
    assert tops[0] == tops[1], tops
