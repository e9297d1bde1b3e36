"""An error reads as an error on every page, light and dark: the tokens page's refusal and the upgrade
page's "fix the errors" were plain text (their styles lived in the maintenance pages' stylesheet only)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: the colours of an element and what the theme calls "bad", as the browser computes them
COLOURS = """(el) => {
  const probe = document.createElement("span");
  probe.style.color = "var(--bad)";
  probe.style.backgroundColor = "var(--bad-bg)";
  document.body.appendChild(probe);
  const bad = getComputedStyle(probe), own = getComputedStyle(el);
  const out = {color: own.color, background: own.backgroundColor, bad: bad.color, badBg: bad.backgroundColor};
  probe.remove();
  return out;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_errors_are_shown_in_the_error_colours(
    scheme: str, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
    log_in(page, asgi_server, viewer.username, start="/accounts/tokens/")
    for _ in range(2):  # the second one has a name already taken
        page.fill("main input[name=name]", "ci")
        page.click("main button[type=submit]")
        page.wait_for_load_state()
    error = page.locator("#token-error")
    assert error.get_attribute("role") == "alert"
    colours = error.evaluate(COLOURS)
    assert colours["background"] == colours["badBg"], colours

    page.goto(f"{asgi_server}/migration/upgrade/")
    page.fill(
        "#upgrade-yaml",
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: x}\nspec: 3\n",
    )
    page.click("#upgrade-submit")
    page.wait_for_load_state()
    colours = page.locator("#no-download").evaluate(COLOURS)
    assert colours["color"] == colours["bad"], colours
