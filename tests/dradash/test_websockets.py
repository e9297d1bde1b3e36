"""Websockets: an unknown path is closed cleanly, and a socket ends with the session that opened it."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from dradash.asgi import router
from inventory.consumers import CLOSE_UNAUTHENTICATED

pytestmark = pytest.mark.django_db(transaction=True)


async def test_it_closes_an_unknown_websocket_path_instead_of_failing() -> None:
    communicator = WebsocketCommunicator(
        router, "/ws/no-such-stream/", headers=[(b"origin", b"http://testserver"), (b"host", b"testserver")]
    )
    connected, code = await communicator.connect()
    assert not connected and code == 4404
    await communicator.disconnect()


def _logged_in_cookie() -> tuple[Client, str]:
    User.objects.create_user("ada", password="correct-horse-battery-staple-7")
    client = Client()
    assert (
        client.post(
            "/accounts/login/", {"username": "ada", "password": "correct-horse-battery-staple-7"}
        ).status_code
        == 302
    )
    return client, client.cookies["sessionid"].value


async def test_it_closes_a_pages_websocket_when_its_user_logs_out() -> None:
    client, session = await sync_to_async(_logged_in_cookie)()
    communicator = await _connected("/ws/inventory/", session)
    await communicator.receive_json_from()  # the state sent on connect
    await sync_to_async(client.post)("/accounts/logout/")
    closed = await communicator.receive_output(timeout=5)
    while closed["type"] != "websocket.close":
        closed = await communicator.receive_output(timeout=5)
    assert closed["code"] == 4401
    await communicator.disconnect()


async def test_it_refuses_a_websocket_without_a_session() -> None:
    communicator = WebsocketCommunicator(
        router, "/ws/inventory/", headers=[(b"origin", b"http://testserver"), (b"host", b"testserver")]
    )
    await communicator.connect()
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": CLOSE_UNAUTHENTICATED}
    await communicator.disconnect()


async def _connected(path: str, session: str = "") -> WebsocketCommunicator:
    """A socket on `path` from a signed-in browser (a new user's session unless one is given)."""
    if not session:
        _, session = await sync_to_async(_logged_in_cookie)()
    communicator = WebsocketCommunicator(
        router,
        path,
        headers=[
            (b"origin", b"http://testserver"),
            (b"host", b"testserver"),
            (b"cookie", f"sessionid={session}".encode()),
        ],
    )
    connected, _ = await communicator.connect()
    assert connected
    return communicator


@pytest.mark.parametrize("path", ["/ws/inventory/", "/ws/api/inventory/", "/ws/maintenance-audit/"])
async def test_it_answers_a_frame_that_is_not_json_and_keeps_the_socket(path: str) -> None:
    communicator = await _connected(path)
    assert (await communicator.receive_json_from())["type"] == "hello"
    await communicator.send_to(text_data="not json")
    answer = await communicator.receive_json_from()
    assert answer["type"] == "error" and "JSON" in answer["message"]
    await communicator.send_to(bytes_data=b"\x00\x01")
    assert (await communicator.receive_json_from())["type"] == "error"
    await communicator.disconnect()


async def test_the_stream_refuses_a_kind_it_does_not_know_naming_it() -> None:
    communicator = await _connected("/ws/api/inventory/?kinds=devicetaintrules,bogus")
    answer = await communicator.receive_json_from()
    assert (
        answer["type"] == "error" and "bogus" in answer["message"] and "resourceslices" in answer["message"]
    )
    closed = await communicator.receive_output()
    assert closed == {"type": "websocket.close", "code": 4400}
