"""Login and roles: every page, data endpoint and socket needs a logged-in user."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, Group
from django.core.management import call_command
from django.http import HttpRequest
from django.test import Client
from django.urls import reverse

from inventory.consumers import InventoryConsumer
from tests.inventory.pages_support import make_user

PAGES = [
    ("inventory:overview", []),
    ("inventory:devices", []),
    ("inventory:devices-data", []),
    ("inventory:devices-export-csv", []),
    ("inventory:devices-export-json", []),
    ("inventory:device-detail", ["gpu.example.com", "node-1", "gpu-0"]),
    ("inventory:claims", []),
    ("inventory:claim-detail", ["ml", "train"]),
    ("inventory:classes", []),
    ("inventory:taint-rules", []),
    ("inventory:taint-rule-detail", ["x"]),
    ("inventory:nodes", []),
    ("inventory:object-yaml", ["pods", "some-uid"]),
    ("inventory:live-state", []),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "args"), PAGES)
def test_it_sends_anonymous_visitors_to_the_login_page(client: Client, name: str, args: list[str]) -> None:
    url = reverse(name, args=args)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")


@pytest.mark.django_db
def test_it_logs_a_user_in_and_out(client: Client) -> None:
    make_user("ada", password="correct-horse-1")
    page = client.get(reverse("login"))
    assert b"Log in to dradash" in page.content
    bad = client.post(reverse("login"), {"username": "ada", "password": "wrong"})
    assert bad.status_code == 200 and b"Please enter a correct username and password" in bad.content
    ok = client.post(reverse("login"), {"username": "ada", "password": "correct-horse-1"})
    assert ok.status_code == 302
    assert client.get(reverse("inventory:overview")).status_code == 200
    out = client.post(reverse("logout"), follow=True)
    assert out.redirect_chain == [(reverse("login"), 302)] and b"You are logged out." in out.content
    assert client.get(reverse("inventory:overview")).status_code == 302
    assert b"You are logged out." not in client.get(reverse("login")).content  # said once


@pytest.mark.django_db
def test_it_creates_the_three_role_groups_on_migrate_and_by_command() -> None:
    assert set(Group.objects.values_list("name", flat=True)) >= {"viewer", "operator", "admin"}
    Group.objects.filter(name="operator").delete()
    call_command("create_roles", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert Group.objects.filter(name="operator").exists()


@pytest.mark.django_db
def test_it_creates_a_demo_admin_and_prints_the_password_once(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("create_demo_admin")
    out = capsys.readouterr().out
    assert out.startswith("demo admin created: username=admin password=")
    password = out.strip().rsplit("password=", 1)[1]
    client = Client()
    assert client.login(request=HttpRequest(), username="admin", password=password)
    from django.contrib.auth.models import User

    admin = User.objects.get(username="admin")
    assert admin.groups.filter(name="admin").exists()


@pytest.mark.django_db
def test_it_uses_the_given_demo_admin_password(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("create_demo_admin", "--password", "s3cret-demo-pw")
    assert Client().login(request=HttpRequest(), username="admin", password="s3cret-demo-pw")


@pytest.mark.django_db(transaction=True)
async def test_it_closes_the_socket_of_an_anonymous_user_with_4401() -> None:
    communicator = WebsocketCommunicator(InventoryConsumer.as_asgi(), "/ws/inventory/")
    communicator.scope["user"] = AnonymousUser()
    connected, _ = await communicator.connect()
    assert connected
    closed = await communicator.receive_output()
    assert closed == {"type": "websocket.close", "code": 4401, "reason": ""} or closed["code"] == 4401
    await communicator.wait()
