"""API tokens: a user makes several named ones on the Tokens page (key shown once, digest stored),
uses them as `Authorization: Token <key>` on the API and the stream, and revokes their own only."""

from __future__ import annotations

import hashlib

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client
from rest_framework.authtoken.models import Token

from dradash.models import ApiToken
from dradash.tokens import MAX_TOKENS_PER_USER, api_token_create
from inventory.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db


@pytest.fixture
def ada() -> User:
    return User.objects.create_user("ada", password="correct-horse-battery-staple-7")


@pytest.fixture
def browser(ada: User) -> Client:
    client = Client()
    client.force_login(ada)
    return client


def make(browser: Client, name: str) -> str:
    response = browser.post("/accounts/tokens/", {"name": name})
    assert response.status_code == 201, response.content
    return response.context["key"]


def api(key: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def test_it_shows_a_new_key_once_and_stores_only_its_digest(browser: Client) -> None:
    key = make(browser, "ci-pipeline")

    token = ApiToken.objects.get(name="ci-pipeline")
    assert token.digest == hashlib.sha256(key.encode()).hexdigest()
    assert key not in {token.prefix, token.digest, token.name}
    assert browser.post("/accounts/tokens/", {"name": "x"}).headers["Cache-Control"].count("no-store")
    listing = browser.get("/accounts/tokens/").content.decode()
    assert "ci-pipeline" in listing and token.prefix in listing
    assert key not in listing


def test_it_authenticates_the_api_with_a_named_token_and_records_its_last_use(browser: Client) -> None:
    key = make(browser, "laptop")
    assert ApiToken.objects.get(name="laptop").last_used_at is None

    assert api(key).get("/api/devices/").status_code == 200

    assert ApiToken.objects.get(name="laptop").last_used_at is not None
    assert "never" not in browser.get("/accounts/tokens/").content.decode()


def test_it_lets_a_user_hold_several_tokens_and_revoke_one_of_them(browser: Client) -> None:
    first, second = make(browser, "first"), make(browser, "second")
    token = ApiToken.objects.get(name="first")

    response = browser.post(f"/accounts/tokens/{token.pk}/revoke/")

    assert response.status_code == 302
    assert api(first).get("/api/devices/").status_code == 401
    assert api(second).get("/api/devices/").status_code == 200


def test_a_revoked_token_is_named_on_the_page_that_follows_and_each_button_says_which(
    browser: Client,
) -> None:
    """The row just vanished: nothing said which token had gone (the buttons all read "Revoke")."""
    make(browser, "ci-<pipeline>")
    make(browser, "laptop")
    token = ApiToken.objects.get(name="ci-<pipeline>")
    listing = browser.get("/accounts/tokens/").content.decode()
    assert 'aria-label="Revoke ci-&lt;pipeline&gt;"' in listing and 'aria-label="Revoke laptop"' in listing
    assert 'data-confirm="Revoke token “laptop”? Scripts that send it stop working at once."' in listing

    page = browser.post(f"/accounts/tokens/{token.pk}/revoke/", follow=True).content.decode()

    assert (
        '<div class="alert ok" role="status" id="token-message">Token “ci-&lt;pipeline&gt;” revoked: requests '
        "that send it are refused from now on.</div>"
    ) in page
    assert "token-message" not in browser.get("/accounts/tokens/").content.decode()  # said once


def test_it_refuses_to_revoke_another_users_token(browser: Client) -> None:
    grace = User.objects.create_user("grace")
    token, key = api_token_create(user=grace, name="grace-ci")

    response = browser.post(f"/accounts/tokens/{token.pk}/revoke/")

    assert response.status_code == 404
    assert api(key).get("/api/devices/").status_code == 200
    assert "grace-ci" not in browser.get("/accounts/tokens/").content.decode()


@pytest.mark.parametrize(("name", "message"), [("", "Required value"), ("x" * 101, "at most 100")])
def test_it_refuses_a_token_without_a_usable_name(browser: Client, name: str, message: str) -> None:
    response = browser.post("/accounts/tokens/", {"name": name})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not ApiToken.objects.exists()


def test_it_refuses_a_second_token_of_the_same_name_and_more_than_the_cap(browser: Client, ada: User) -> None:
    make(browser, "ci")
    assert browser.post("/accounts/tokens/", {"name": "ci"}).status_code == 400
    for i in range(MAX_TOKENS_PER_USER - 1):
        api_token_create(user=ada, name=f"t{i}")
    response = browser.post("/accounts/tokens/", {"name": "one-too-many"})
    assert response.status_code == 400 and "revoke one first" in response.content.decode()
    assert ApiToken.objects.filter(user=ada).count() == MAX_TOKENS_PER_USER


def test_it_keeps_tokens_made_with_drf_create_token_working(ada: User) -> None:
    legacy = Token.objects.create(user=ada)
    assert api(legacy.key).get("/api/devices/").status_code == 200


def test_it_refuses_the_token_of_a_deactivated_user(browser: Client, ada: User) -> None:
    key = make(browser, "ci")
    ada.is_active = False
    ada.save()
    assert api(key).get("/api/devices/").status_code == 401


def test_it_answers_writes_to_the_page_only_as_a_form(browser: Client) -> None:
    assert browser.delete("/accounts/tokens/").status_code == 405
    assert browser.get("/accounts/tokens/1/revoke/").status_code == 405


def test_it_links_the_tokens_page_from_the_user_menu(browser: Client) -> None:
    page = browser.get("/").content.decode()
    who = page[page.index('class="who"') :]
    assert 'href="/accounts/tokens/"' in who[: who.index("</div>")]


def test_it_sends_anonymous_browsers_to_the_login_page() -> None:
    response = Client().get("/accounts/tokens/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db(transaction=True)
async def test_it_opens_the_api_stream_with_a_named_token() -> None:
    def setup() -> str:
        return api_token_create(user=User.objects.create_user("robot"), name="stream")[1]

    key = await sync_to_async(setup)()
    ws = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns),
        "/ws/api/inventory/",
        headers=[(b"authorization", f"Token {key}".encode())],
    )
    ws.scope["user"] = AnonymousUser()
    await ws.connect()
    hello = await ws.receive_json_from(timeout=5)
    assert hello["type"] == "hello"
    await ws.disconnect()


def test_it_shows_a_legacy_token_on_the_page_and_revokes_it(browser: Client, ada: User) -> None:
    legacy = Token.objects.create(user=ada)
    html = browser.get("/accounts/tokens/").content.decode()
    assert 'id="legacy-token"' in html and legacy.key[:6] in html and legacy.key not in html
    assert "No tokens yet." not in html
    assert browser.post("/accounts/tokens/legacy/revoke/").status_code == 302
    assert not Token.objects.filter(user=ada).exists()
    assert Client().get("/api/devices/", HTTP_AUTHORIZATION=f"Token {legacy.key}").status_code == 401
    assert browser.post("/accounts/tokens/legacy/revoke/").status_code == 404


def test_the_command_makes_a_named_token_the_page_lists(browser: Client, ada: User) -> None:
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command("create_api_token", "ada", "--name", "ci-pipeline", stdout=out)
    key = out.getvalue().strip()
    assert key.startswith("dd_")
    assert "ci-pipeline" in browser.get("/accounts/tokens/").content.decode()
    assert Client().get("/api/devices/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    with pytest.raises(CommandError, match="username: no user 'nobody'"):
        call_command("create_api_token", "nobody", "--name", "x")
    with pytest.raises(CommandError, match="name"):
        call_command("create_api_token", "ada", "--name", "ci-pipeline")  # the same name twice


@pytest.mark.parametrize("header", ["Bearer dd_abc", "Basic YWRhOnB3", "token"])
def test_it_names_the_accepted_scheme_when_the_authorization_header_uses_another(header: str) -> None:
    response = Client(HTTP_AUTHORIZATION=header).get("/api/devices/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    detail = response.json()["detail"]
    assert "Authorization" in detail and "Token <key>" in detail, detail
    assert "not provided" not in detail


def test_a_signed_in_browser_keeps_its_session_behind_a_proxy_that_adds_basic_auth(browser: Client) -> None:
    response = browser.get("/api/devices/", HTTP_AUTHORIZATION="Basic cHJveHk6c2VjcmV0")
    assert response.status_code == 200


def change(name: str) -> dict[str, object]:
    entry = {"kind": "pods", "type": "ADDED", "uid": f"uid-{name}", "name": name, "namespace": "ml"}
    return {
        "type": "inventory.changed",
        "kinds": ["pods"],
        "changes": [entry],
        "count": 1,
        "truncated": False,
    }


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("how", ["revoked", "user deactivated"])
async def test_a_stream_opened_with_a_token_stops_once_the_token_is_revoked(how: str) -> None:
    def setup() -> tuple[User, ApiToken, str]:
        robot = User.objects.create_user("robot")
        token, key = api_token_create(user=robot, name="stream")
        return robot, token, key

    def take_away(robot: User, token: ApiToken) -> None:
        if how == "revoked":
            token.delete()
        else:
            robot.is_active = False
            robot.save()

    robot, token, key = await sync_to_async(setup)()
    ws = WebsocketCommunicator(
        URLRouter(websocket_urlpatterns),
        "/ws/api/inventory/",
        headers=[(b"authorization", f"Token {key}".encode())],
    )
    ws.scope["user"] = AnonymousUser()
    await ws.connect()
    assert (await ws.receive_json_from(timeout=5))["type"] == "hello"
    layer = get_channel_layer()
    await layer.group_send("inventory", change("before"))
    assert (await ws.receive_json_from(timeout=5))["changes"][0]["name"] == "before"

    await sync_to_async(take_away)(robot, token)
    await layer.group_send("inventory", change("after"))

    assert await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}
    await ws.disconnect()
