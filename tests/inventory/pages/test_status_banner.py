"""Every page says when the data may not be current, and why; the API says how old it is; a change of a
watch's state alone reaches the pages' live socket."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from inventory.kube import MIRRORED_KINDS
from inventory.middleware import DATA_AGE_HEADER, DATA_SYNCED_HEADER
from inventory.mirror.reflector import Health
from inventory.mirror.writer import BatchWriter, HealthUpdate
from inventory.models import NOT_SERVED, WatchState

pytestmark = pytest.mark.django_db
BANNER = 'data-testid="status-banner"'


@pytest.fixture
def client() -> Client:
    c = Client()
    c.force_login(User.objects.create_user("viewer", password="x" * 12))
    return c


def all_synced(*, confirmed_ago: float = 2.0) -> None:
    at = timezone.now() - timedelta(seconds=confirmed_ago)
    for kind in MIRRORED_KINDS:
        WatchState.objects.create(kind=kind, state="synced", since=at, confirmed_at=at)


@pytest.mark.parametrize("path", ["/", "/devices/", "/claims/", "/maintenance/", "/taint-rules/"])
def test_it_shows_no_banner_when_every_kind_is_synced_and_fresh(client: Client, path: str) -> None:
    all_synced()
    assert BANNER not in client.get(path).content.decode()


@pytest.mark.parametrize("path", ["/", "/devices/", "/claims/", "/maintenance/", "/nodes/"])
def test_it_says_since_when_the_cluster_is_unreachable_on_every_page(client: Client, path: str) -> None:
    all_synced()
    gone = timezone.now() - timedelta(minutes=3)
    WatchState.objects.filter(kind__in=["pods", "resourceslices"]).update(state="unreachable", since=gone)

    page = client.get(path).content.decode()

    assert BANNER in page
    assert f"unreachable since {gone:%Y-%m-%d %H:%M:%S} UTC" in page
    assert 'data-kind="pods" data-state="unreachable"' in page


def test_a_cluster_unreachable_for_every_kind_is_said_once_not_kind_by_kind(client: Client) -> None:
    """Nine kinds each "unreachable since" the same second filled a phone's first screen."""
    all_synced()
    gone = timezone.now() - timedelta(minutes=3)
    WatchState.objects.update(state="unreachable", since=gone)

    page = client.get("/nodes/").content.decode()

    banner = page[page.index(BANNER) : page.index("</div>", page.index(BANNER))]
    assert f"The cluster is unreachable since {gone:%Y-%m-%d %H:%M:%S} UTC" in banner
    assert "the pages show what the mirror last saw." in banner
    assert "Not synced" not in banner and "data-kind=" not in banner
    assert "it may not be running" not in banner  # the mirror runs; the cluster does not answer


def test_it_says_the_mirror_has_not_synced_before_any_watch_reported(client: Client) -> None:
    page = client.get("/devices/").content.decode()
    assert BANNER in page and "has not synced with the cluster yet" in page


def test_it_says_the_data_is_old_when_every_kind_is_synced_but_not_confirmed_for_too_long(
    client: Client, settings: Any
) -> None:
    settings.DRADASH_READY_MAX_DATA_AGE_SECONDS = 60
    all_synced(confirmed_ago=600)

    page = client.get("/claims/").content.decode()

    assert BANNER in page and "it may not be running" in page


def test_it_ignores_a_kind_the_server_does_not_serve(client: Client) -> None:
    all_synced()
    WatchState.objects.filter(kind="resourcepoolstatusrequests").update(state="stopped", error=NOT_SERVED)
    assert BANNER not in client.get("/").content.decode()


def test_it_serves_the_banner_alone_for_its_live_refresh(client: Client) -> None:
    all_synced()
    WatchState.objects.filter(kind="nodes").update(state="forbidden", since=timezone.now())

    fragment = client.get("/live/status-banner/").content.decode()

    assert 'id="status-banner"' in fragment and "<main" not in fragment
    assert 'data-kind="nodes" data-state="forbidden"' in fragment


def test_it_puts_the_data_age_on_api_answers(client: Client) -> None:
    response = client.get("/api/devices/")
    assert response[DATA_AGE_HEADER] == "unknown" and response[DATA_SYNCED_HEADER] == "false"

    all_synced(confirmed_ago=42)
    response = client.get("/api/devices/")
    assert 42 <= int(response[DATA_AGE_HEADER]) < 60 and response[DATA_SYNCED_HEADER] == "true"


def test_it_broadcasts_a_change_of_a_watch_state_alone(django_capture_on_commit_callbacks: Any) -> None:
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)("inventory", channel)
    writer = BatchWriter()
    with django_capture_on_commit_callbacks(execute=True):
        writer.apply([HealthUpdate("pods", Health(kind="pods", state="synced", since=1.0, confirmed_at=1.0))])
    async_to_sync(layer.receive)(channel)

    with django_capture_on_commit_callbacks(execute=True):
        writer.apply([HealthUpdate("pods", Health(kind="pods", state="unreachable", since=5.0))])
    message = async_to_sync(layer.receive)(channel)

    assert message["kinds"] == ["watchstate"] and message["changes"] == []
    state = WatchState.objects.get(kind="pods")
    assert state.state == "unreachable" and state.since is not None and state.since.timestamp() == 5.0


def test_it_says_how_long_ago_in_the_words_of_every_other_time_on_the_page(client: Client) -> None:
    all_synced()
    gone = timezone.now() - timedelta(seconds=20)
    WatchState.objects.filter(kind="pods").update(state="unreachable", since=gone)

    page = client.get("/").content.decode()

    assert "(0\xa0minutes ago)" not in page and "(0 minutes ago)" not in page
    assert f'<time datetime="{gone:%Y-%m-%dT%H:%M:%SZ}"' in page
    assert ">20 s ago</time>)" in page or ">21 s ago</time>)" in page
