"""API tokens in a real browser: the key shown once can be copied with a button, and reloading the page
that shows it does not post the form again (which refused the name as taken and lost the key)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_new_token_can_be_copied_and_a_reload_does_not_post_it_again(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=asgi_server)
    page = context.new_page()
    log_in(page, asgi_server, viewer.username, start="/accounts/tokens/")
    page.fill("main input[name=name]", "ci")
    page.click("main button[type=submit]")
    key = page.locator("#new-token-key").inner_text()
    assert key.startswith("dd_")

    page.locator("#new-token button[data-copy]").click()
    expect(page.locator("#new-token button[data-copy]")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == key

    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.reload()
    assert posts == [], "a reload posted the form again"
    expect(page.locator("#token-error")).to_have_count(0)
    expect(page.locator("#new-token")).to_have_count(0)  # shown once, as the page said
    expect(page.locator("#tokens tbody tr", has_text="ci")).to_have_count(1)
    context.close()


def test_revoking_a_token_asks_first_and_then_says_which_one_went(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    """One click on a row's "Revoke" took the token away at once, and the row just vanished."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/accounts/tokens/")
    for name in ("ci", "laptop"):
        page.fill("main input[name=name]", name)
        page.click("main button[type=submit]")
        expect(page.locator("#new-token")).to_be_visible()
    asked: list[str] = []

    def answer(dialog: Any, accept: bool) -> None:
        asked.append(dialog.message)
        if accept:
            dialog.accept()
        else:
            dialog.dismiss()

    page.once("dialog", lambda d: answer(d, False))
    page.get_by_role("button", name="Revoke ci").click()
    expect(page.locator("#tokens tbody tr")).to_have_count(2)  # "Cancel" sent nothing
    assert asked == ["Revoke token “ci”? Scripts that send it stop working at once."]

    page.once("dialog", lambda d: answer(d, True))
    page.get_by_role("button", name="Revoke ci").click()
    expect(page.locator("#token-message")).to_have_text(
        "Token “ci” revoked: requests that send it are refused from now on."
    )
    expect(page.locator("#tokens tbody tr")).to_have_count(1)
    expect(page.locator("#tokens tbody tr", has_text="laptop")).to_have_count(1)
