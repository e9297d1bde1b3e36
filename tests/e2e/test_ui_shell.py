"""The page shell in a real browser: the phone layout (the nav collapses behind a button, no page is wider
than a 390 px screen), dark mode (follows prefers-color-scheme, a light/dark/auto toggle that is remembered,
set before the first paint), the shared table behaviour (keyboard sort, column chooser) and the time format."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import PASSWORD, log_in
from tests.e2e.ui_pages import MAIN_PAGES, OVERFLOWING

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}


@pytest.fixture
def operator(transactional_db: None) -> User:
    user = User.objects.create_user(username="ophelia", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    return user


def background(page: Any) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def test_at_phone_width_the_nav_collapses_and_no_page_is_wider_than_the_screen(
    mirror: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport=PHONE)
    log_in(page, asgi_server, operator.username, start="/")
    toggle = page.locator("#nav-toggle")
    expect(toggle).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#main-nav")).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#main-nav a", has_text="Claims")).to_be_visible()
    page.keyboard.press("Escape")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#main-nav")).to_be_hidden()
    # Through the menu, by keyboard: focus the button, open, follow a link.
    toggle.focus()
    page.keyboard.press("Enter")
    page.locator("#main-nav a", has_text="Claims").click()
    page.wait_for_url("**/claims/")

    wide: dict[str, Any] = {}
    for path, name in MAIN_PAGES:
        page.goto(f"{asgi_server}{path}")
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            wide[name] = (width, page.evaluate(OVERFLOWING))
    assert wide == {}

    # At desktop width the nav is a plain row of links again, no button.
    page.set_viewport_size(DESKTOP)
    expect(toggle).to_be_hidden()
    expect(page.locator("#main-nav a", has_text="Claims")).to_be_visible()


def test_dark_mode_follows_the_system_and_the_toggle_is_remembered(
    operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport=DESKTOP, color_scheme="dark")
    page = context.new_page()
    log_in(page, asgi_server, operator.username, start="/accounts/tokens/")
    html = page.locator("html")
    expect(html).to_have_attribute("data-theme", "dark")
    dark_bg = background(page)
    assert dark_bg != "rgb(246, 247, 249)"
    # The theme script is a plain blocking script in <head>: it runs before the first paint.
    script = page.locator("head script[src*='theme.js']")
    assert (
        script.count() == 1
        and script.get_attribute("defer") is None
        and script.get_attribute("async") is None
    )

    button = page.locator("#theme-toggle")
    expect(button).to_have_text("Theme: auto")
    button.click()  # auto -> light
    expect(html).to_have_attribute("data-theme", "light")
    assert background(page) == "rgb(246, 247, 249)"
    page.reload()
    expect(html).to_have_attribute("data-theme", "light")  # remembered, against the system's dark
    expect(button).to_have_text("Theme: light")
    button.click()  # light -> dark
    expect(html).to_have_attribute("data-theme", "dark")
    button.click()  # dark -> auto: the system again
    expect(html).to_have_attribute("data-theme", "dark")
    page.emulate_media(color_scheme="light")
    expect(html).to_have_attribute("data-theme", "light")  # auto follows a change of the system setting
    context.close()

    light = browser.new_context(viewport=DESKTOP, color_scheme="light")
    page = light.new_page()
    log_in(page, asgi_server, operator.username, start="/accounts/tokens/")
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    light.close()


def test_tables_sort_by_keyboard_and_remember_the_chosen_columns(
    mirror: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport=DESKTOP)
    log_in(page, asgi_server, operator.username, start="/classes/")
    header = page.locator("#classes-body th", has_text="Devices")
    button = header.locator("button.th-sort")
    expect(header).to_have_attribute("aria-sort", "none")
    button.focus()
    page.keyboard.press("Enter")
    expect(header).to_have_attribute("aria-sort", "ascending")
    column = page.evaluate(
        "Array.from(document.querySelector('#classes-body thead tr').cells).findIndex(c => c.textContent.trim() === 'Devices')"
    )

    def counts() -> list[int]:
        return [int(x) for x in page.evaluate(
            f"Array.from(document.querySelectorAll('#classes-body tbody tr')).map(r => r.cells[{column}].textContent.trim())"
        )]  # fmt: skip

    assert counts() == sorted(counts())
    page.keyboard.press("Enter")
    expect(header).to_have_attribute("aria-sort", "descending")
    assert counts() == sorted(counts(), reverse=True)

    # The column chooser hides a column, and the choice survives a reload.
    page.locator("details.col-chooser summary").click()
    page.locator("details.col-chooser label", has_text="Config").locator("input").uncheck()
    expect(page.locator("#classes-body th", has_text="Config")).to_be_hidden()
    page.reload()
    expect(page.locator("#classes-body th", has_text="Config")).to_be_hidden()
    expect(page.locator("#classes-body th", has_text="Devices")).to_be_visible()
    # A live refresh replaces the table: the new one is sortable and keeps the chosen columns.
    with page.expect_response(lambda r: "fragment=" in r.url):
        page.evaluate("htmx.trigger('#classes-body', 'live-refresh')")
    expect(page.locator("#classes-body th", has_text="Devices").locator("button.th-sort")).to_have_count(1)
    expect(page.locator("#classes-body th", has_text="Config")).to_be_hidden()

    # Claims are sorted by the server: the header's button asks for ?sort=.
    page.goto(f"{asgi_server}/claims/")
    page.locator("#claims-table th", has_text="Age").locator("button").click()
    page.wait_for_url("**/claims/?sort=age")
    expect(page.locator("#claims-table th", has_text="Age")).to_have_attribute("aria-sort", "ascending")
    time = page.locator("#claims-table td time").first
    assert (time.get_attribute("title") or "").endswith(" UTC")
    assert (time.text_content() or "").endswith("ago") or time.text_content() == "just now"


def test_the_overview_fits_from_1280_to_1920_px_and_its_cards_link_to_the_lists(
    mirror: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport=DESKTOP)
    log_in(page, asgi_server, operator.username, start="/")
    for width in (1280, 1440, 1920):
        page.set_viewport_size({"width": width, "height": 900})
        for path in ("/", "/devices/", "/claims/", "/maintenance/"):
            page.goto(f"{asgi_server}{path}")
            page.wait_for_load_state("networkidle")
            assert page.evaluate(OVERFLOWING) == [], (path, width)
            clipped = page.evaluate(
                """() => Array.from(document.querySelectorAll('.table-scroll, .tabulator-tableholder'))
                     .filter((b) => b.scrollWidth > b.clientWidth + 1).map((b) => (b.querySelector('table') || b.parentElement).id + ' ' + b.scrollWidth + '>' + b.clientWidth)"""
            )
            assert clipped == [], (path, width)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{asgi_server}/")
    page.locator("a.card", has_text="Claims").click()
    page.wait_for_url("**/claims/")
    page.go_back()
    page.locator("a.card", has_text="NoExecute").click()
    page.wait_for_url("**/devices/?taint=NoExecute")


def test_the_devices_table_has_a_column_chooser_and_keyboard_sorting(
    mirror: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport=DESKTOP)
    log_in(page, asgi_server, operator.username, start="/devices/")
    expect(page.locator(".tabulator-row").first).to_be_visible(timeout=10_000)
    driver_header = page.locator(".tabulator-col[tabulator-field=driver]")
    expect(driver_header).to_be_hidden()  # hidden by default (inventory/tables.py)
    page.locator("#device-columns summary").click()
    page.locator("#device-columns label", has_text="Driver").locator("input").check()
    expect(driver_header).to_be_visible()
    page.reload()
    expect(page.locator(".tabulator-row").first).to_be_visible(timeout=10_000)
    expect(driver_header).to_be_visible()  # remembered

    device_header = page.locator(".tabulator-col[tabulator-field=device]")
    device_header.focus()
    page.keyboard.press("Enter")
    expect(device_header).to_have_attribute("aria-sort", re.compile("ascending|descending"))
    page.wait_for_url(re.compile(r"sort=device"))


@pytest.fixture
def long_name(transactional_db: None) -> User:
    user = User.objects.create_user(username="ophelia.operations-lead@example.com", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    return user


def test_at_laptop_widths_the_nav_keeps_one_row_and_folds_before_it_would_wrap(
    mirror: MirrorHandle, long_name: User, asgi_server: str, browser: Any
) -> None:
    """A second row of links left "Migration" alone under the others from 900 to 1340 px."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport=DESKTOP)
    log_in(page, asgi_server, long_name.username, start="/devices/")
    rows = "() => new Set(Array.from(document.querySelectorAll('#main-nav a')).map((a) => a.getBoundingClientRect().top)).size"
    for width in (1272, 1366, 1430, 1432, 1440, 1600, 1920):
        page.set_viewport_size({"width": width, "height": 900})
        expect(page.locator("#nav-toggle")).to_be_hidden()
        assert page.evaluate(rows) == 1, width
        bar = page.locator("#topbar").bounding_box()
        assert bar is not None and bar["height"] < 50, (width, bar)  # brand, nav, search and user: one row
        user = page.locator(".who .user")
        assert user.get_attribute("title") == f"signed in as {long_name.username}"
    for width in (1000, 1200):
        page.set_viewport_size({"width": width, "height": 900})
        expect(page.locator("#nav-toggle")).to_be_visible()
        expect(page.locator("#main-nav")).to_be_hidden()
