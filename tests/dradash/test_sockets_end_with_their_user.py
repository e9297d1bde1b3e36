"""A user an admin deactivates, deletes or gives a new password may no longer use the dashboard: their open
websockets close with 4401 at once, not when their session ends (before, they kept streaming until then);
another user's stay open. Sockets opened with an API token close too when their user is deactivated or
deleted, or the token is revoked. Over a real server (uvicorn) and real websockets; well within the session check's 30 s."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack

import pytest
from django.contrib.auth.models import User

from dradash.realtime import send_now
from dradash.sessionguard import CHECK_SECONDS
from dradash.tokens import api_token_create, api_token_revoke
from tests.dradash.sockets_support import assert_closed_for_the_user, assert_open, opened, session_cookie
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db(transaction=True)

#: a socket told at once closes well before the periodic session check could have closed it
AT_ONCE = CHECK_SECONDS / 3


def deactivate(user: User) -> None:
    user.is_active = False
    user.save()


def change_password(user: User) -> None:
    user.set_password("a-new-password-from-the-admin-9")
    user.save()


def delete(user: User) -> None:
    user.delete()


@pytest.mark.parametrize("take_away", [deactivate, change_password, delete])
def test_it_closes_every_page_socket_of_the_user_at_once_and_leaves_other_users_open(
    asgi_server: str, take_away: Callable[[User], None]
) -> None:
    ada, grace = make_user("ada"), make_user("grace")
    laptop, phone = session_cookie(ada), session_cookie(ada)
    with ExitStack() as sockets:
        adas = [
            opened(sockets, asgi_server, "/ws/inventory/", {"Cookie": laptop}),
            opened(sockets, asgi_server, "/ws/maintenance-audit/", {"Cookie": laptop}),
            opened(sockets, asgi_server, "/ws/inventory/", {"Cookie": phone}),
            opened(sockets, asgi_server, "/ws/api/inventory/", {"Cookie": phone}),
        ]
        graces = opened(sockets, asgi_server, "/ws/inventory/", {"Cookie": session_cookie(grace)})

        take_away(ada)

        for ws in adas:
            assert_closed_for_the_user(ws, timeout=AT_ONCE)
        assert_open(graces)


@pytest.mark.parametrize("take_away", [deactivate, delete])
def test_it_closes_a_stream_opened_with_a_token_at_once_when_its_user_is_deactivated_or_deleted(
    asgi_server: str, take_away: Callable[[User], None]
) -> None:
    robot, other = make_user("robot"), make_user("other-robot")
    _, key = api_token_create(user=robot, name="ci")
    _, other_key = api_token_create(user=other, name="ci")
    with ExitStack() as sockets:
        robots = opened(sockets, asgi_server, "/ws/api/inventory/", {"Authorization": f"Token {key}"})
        others = opened(sockets, asgi_server, "/ws/api/inventory/", {"Authorization": f"Token {other_key}"})

        take_away(robot)  # and no inventory change follows: before, the stream ended only at the next one

        assert_closed_for_the_user(robots, timeout=AT_ONCE)
        send_now("inventory", {"type": "inventory.changed", "kinds": ["pods"], "changes": [], "count": 0})
        assert json.loads(others.recv(timeout=20))["type"] == "changes"  # the other user's stream goes on


def test_it_closes_a_stream_at_once_when_its_token_is_revoked_and_leaves_the_users_other_token_open(
    asgi_server: str,
) -> None:
    robot = make_user("robot")
    revoked, key = api_token_create(user=robot, name="ci")
    _, kept_key = api_token_create(user=robot, name="nightly")
    with ExitStack() as sockets:
        gone = opened(sockets, asgi_server, "/ws/api/inventory/", {"Authorization": f"Token {key}"})
        kept = opened(sockets, asgi_server, "/ws/api/inventory/", {"Authorization": f"Token {kept_key}"})

        assert api_token_revoke(user=robot, token_id=revoked.pk)  # no inventory change follows

        assert_closed_for_the_user(gone, timeout=AT_ONCE)
        send_now("inventory", {"type": "inventory.changed", "kinds": ["pods"], "changes": [], "count": 0})
        assert json.loads(kept.recv(timeout=20))["type"] == "changes"  # the other token's stream goes on
