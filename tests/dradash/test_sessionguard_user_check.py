"""The session check every CHECK_SECONDS is the fallback when a user's change sent no message to their
sockets (a queryset `.update()`; or the message was lost, the channel layer down at that moment): a socket
whose user was deactivated, or whose password is no longer the one the session signed in with, closes
with 4401 at the next check, while a signed-in user's socket stays open through the checks. Over a real
server (uvicorn), the check made every 0.1 s."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import ExitStack

import pytest
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User

import dradash.asgi
from dradash import sessionguard
from tests.dradash.sockets_support import assert_closed_for_the_user, assert_open, opened, session_cookie
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def deactivate_without_a_message(user: User) -> None:
    User.objects.filter(pk=user.pk).update(is_active=False)


def change_password_without_a_message(user: User) -> None:
    User.objects.filter(pk=user.pk).update(password=make_password("a-new-password-from-the-admin-9"))


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Every session check the server makes, (session key, alive), in order; made every 0.1 s."""
    monkeypatch.setattr(dradash.asgi.session_guard, "check_seconds", 0.1)
    made: list[tuple[str, bool]] = []
    lock = threading.Lock()
    check = sessionguard._session_alive

    def recorded(session_key: str) -> bool:
        alive = check(session_key)
        with lock:
            made.append((session_key, alive))
        return alive

    monkeypatch.setattr(sessionguard, "_session_alive", recorded)
    return made


@pytest.mark.parametrize("change", [deactivate_without_a_message, change_password_without_a_message])
def test_the_session_check_closes_the_socket_of_a_user_changed_without_a_message(
    asgi_server: str, checks: list[tuple[str, bool]], change: Callable[[User], None]
) -> None:
    ada, grace = make_user("ada"), make_user("grace")
    adas_cookie, graces_cookie = session_cookie(ada), session_cookie(grace)
    graces_key = graces_cookie.removeprefix("sessionid=")
    with ExitStack() as sockets:
        adas = opened(sockets, asgi_server, "/ws/inventory/", {"Cookie": adas_cookie})
        graces = opened(sockets, asgi_server, "/ws/inventory/", {"Cookie": graces_cookie})

        change(ada)

        assert_closed_for_the_user(adas, timeout=20)
        checked_before = len(checks)
        deadline = time.monotonic() + 20
        while sum(key == graces_key for key, _ in checks[checked_before:]) < 2:  # two more of hers
            assert time.monotonic() < deadline, "grace's session was not checked again"
            time.sleep(0.02)
        assert all(alive for key, alive in checks if key == graces_key)
        assert_open(graces)
