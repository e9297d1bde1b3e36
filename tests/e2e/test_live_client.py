"""live.js in a real browser: changes that arrive while a region is re-fetching are not lost."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in, mirror_current

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize(
    ("path", "marker"), [("/claims/", "fragment=table"), ("/devices/", "/devices/data/")]
)
def test_it_refetches_once_more_for_changes_that_arrive_mid_refresh(
    viewer: Any, asgi_server: str, browser: Any, path: str, marker: str
) -> None:
    page = browser.new_page()
    log_in(page, asgi_server, viewer.username, start=path)
    page.wait_for_function("() => window.dradashLive && window.dradashLive.idle()")
    if path == "/devices/":
        page.wait_for_function("() => document.getElementById('device-count').textContent.includes('match')")
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if marker in r.url else None)

    # Five changes in one tick: the first starts a re-fetch, the other four arrive while it runs.
    page.evaluate("for (let i = 0; i < 5; i++) window.dradashLive.refresh(['resourceclaims'])")
    page.wait_for_function("() => window.dradashLive.idle()", timeout=10_000)
    assert len(requests) == 2, f"expected one re-fetch plus one catch-up, got {requests}"


def test_it_refreshes_a_page_whose_socket_says_the_cluster_moved_on(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    """A page that connects late: the socket's hello carries a newer version, so the page re-fetches."""
    import json

    page = browser.new_page()
    log_in(page, asgi_server, viewer.username, start="/claims/")
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "fragment=table" in r.url else None)
    rendered = page.evaluate("document.body.dataset.liveVersion")

    def late_server(ws: Any) -> None:
        ws.send(json.dumps({"type": "hello", "version": rendered}))  # nothing new: no re-fetch
        ws.send(json.dumps({"type": "hello", "version": "moved-on"}))  # newer: re-fetch

    page.route_web_socket("**/ws/inventory/", late_server)
    page.reload()
    page.wait_for_function("() => window.dradashLive && window.dradashLive.version() === 'moved-on'")
    page.wait_for_function("() => window.dradashLive.idle()")
    assert len(requests) == 1, requests


def test_it_shows_logged_out_when_the_socket_refuses_the_session(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    log_in(page, asgi_server, viewer.username, start="/claims/")
    page.route_web_socket("**/ws/inventory/", lambda ws: ws.close(code=4401, reason="login required"))
    page.reload()
    expect(page.locator("#live-status")).to_have_attribute("data-state", "offline")
    expect(page.locator("#live-status")).to_have_text("logged out")


def test_it_polls_when_the_socket_drops_and_goes_live_again_when_it_returns(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    log_in(page, asgi_server, viewer.username, start="/claims/")
    attempts: list[int] = []

    def flaky(ws: Any) -> None:
        attempts.append(1)
        if len(attempts) == 1:
            ws.close(code=1011, reason="server restarting")
        else:
            ws.connect_to_server()

    page.route_web_socket("**/ws/inventory/", flaky)
    page.reload()
    expect(page.locator("#live-status")).to_have_attribute("data-state", "polling")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live", timeout=10_000)


@pytest.mark.parametrize("failure", ["server error", "no answer"])
def test_it_says_the_page_is_not_live_while_its_polls_fail_and_polling_once_one_is_answered(
    viewer: Any, asgi_server: str, browser: Any, failure: str
) -> None:
    """The socket is down, so the page polls; while the polls fail (a 503, or no answer at all) what it
    shows may be stale, so it must not read "polling" as if it were current."""
    import re

    from playwright.sync_api import expect

    mirror_current()  # no stale-data banner: the badge's words are about the page's connection alone
    page = browser.new_page()
    log_in(page, asgi_server, viewer.username, start="/claims/")
    poll_url = page.evaluate("document.body.dataset.livePoll")
    failing = [True]

    def poll(route: Any) -> None:
        if not failing[0]:
            route.continue_()
        elif failure == "server error":
            route.fulfill(status=503, content_type="application/json", body='{"errors": []}')
        else:
            route.abort("connectionrefused")

    page.route(f"**{poll_url}*", poll)
    page.route_web_socket("**/ws/inventory/", lambda ws: ws.close(code=1011, reason="server restarting"))
    page.reload()

    status = page.locator("#live-status")
    expect(status).to_have_attribute("data-state", "offline", timeout=10_000)
    expect(status).to_have_text(re.compile(r"^not live — last updated \d\d:\d\d:\d\d UTC$"))

    failing[0] = False
    expect(status).to_have_attribute("data-state", "polling", timeout=10_000)
    expect(status).to_have_text("polling")


def test_a_page_whose_socket_reached_its_lifetime_reconnects_and_hears_the_next_change(
    viewer: Any, asgi_server: str, browser: Any, settings: Any
) -> None:
    """The server closes a socket after DRADASH_SOCKET_MAX_SECONDS (1012) so that no page outlives its
    channel-layer groups: the page opens a new one at once, says live, and the next change reaches it."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer
    from playwright.sync_api import expect

    settings.DRADASH_SOCKET_MAX_SECONDS = 2
    page = browser.new_page()
    sockets: list[Any] = []
    page.on("websocket", lambda ws: sockets.append(ws) if "/ws/inventory/" in ws.url else None)
    log_in(page, asgi_server, viewer.username, start="/claims/")
    page.wait_for_function("() => window.dradashLive && window.dradashLive.idle()")
    states: list[str] = []
    page.on("console", lambda m: states.append(m.text))
    page.evaluate(
        """() => new MutationObserver(() => console.log('state:' + document.getElementById('live-status')
            .dataset.state)).observe(document.getElementById('live-status'), {attributes: true})"""
    )
    deadline = time.monotonic() + 15
    while len(sockets) < 2 and time.monotonic() < deadline:  # the first lives 2 s, less up to a tenth
        page.wait_for_timeout(100)
    assert len(sockets) >= 2 and sockets[0].is_closed(), "the page opened a new socket after the first closed"
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    page.wait_for_function("() => window.dradashLive.idle()")
    assert [s for s in states if s.startswith("state:") and s != "state:live"] == [], "no polling in between"

    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "fragment=table" in r.url else None)
    event = {"type": "inventory.changed", "kinds": ["resourceclaims"], "changes": []}
    # from a thread of its own: Playwright's sync API runs an event loop in this one
    sender = threading.Thread(target=async_to_sync(get_channel_layer().group_send), args=("inventory", event))
    sender.start()
    sender.join(10)
    deadline = time.monotonic() + 10
    while not requests and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert requests, "the change sent after the reconnect re-fetched the table"
