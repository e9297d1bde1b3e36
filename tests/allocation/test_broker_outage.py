"""A what-if asked while the Celery broker (Redis) does not answer: the run cannot be queued, so the API
says so — a 503 naming the broker and what it said — instead of a 202 with a "pending" run that is in fact
already failed in the database. Through a real Redis behind a cut TCP path; the rows are real."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest
import redis
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from allocation.models import RunState, WhatIfRun
from dradash.celery import app
from tests.allocation import whatif_objects as o
from tests.allocation.test_runs_api import ONE_GPU_TEMPLATE
from tests.faults import TcpCut

pytestmark = pytest.mark.django_db(transaction=True)

REDIS_TEST_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/11"


def _reset_producers() -> None:
    app._pool = None  # the connections and producers kept for the broker configured before
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None


@pytest.fixture
def broker(settings: Any) -> Iterator[TcpCut]:
    """The app's broker is the real Redis, through a path the test can cut."""
    try:
        redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=1).ping()
    except redis.exceptions.RedisError:
        pytest.skip(f"Redis not reachable at {REDIS_TEST_URL}")
    parts = urlparse(REDIS_TEST_URL)
    cut = TcpCut(parts.hostname or "127.0.0.1", parts.port or 6379)
    url = f"redis://127.0.0.1:{cut.port}{parts.path or '/0'}"
    old = app.conf.broker_url
    settings.CELERY_BROKER_URL = url
    app.conf.broker_url = url
    _reset_producers()
    try:
        yield cut
    finally:
        app.conf.broker_url = old
        _reset_producers()
        cut.close()


def test_a_what_if_asked_while_the_broker_is_down_is_a_503_naming_the_broker_not_a_pending_run(
    broker: TcpCut,
) -> None:
    o.store(*o.small_cluster().values())
    api = APIClient()
    api.force_authenticate(User.objects.create_user("vera", password="pw-vera-123"))
    broker.cut()
    response = api.post("/api/whatif/runs/", {"kind": "headroom", "input": ONE_GPU_TEMPLATE}, format="json")
    assert response.status_code == 503, response.content
    body = response.json()
    message = body["errors"][0]["message"]
    assert "could not queue the run" in message and "broker" in message
    run = WhatIfRun.objects.get()
    assert run.state == RunState.FAILED and run.error == message
    assert body["run"]["id"] == str(run.id) and body["run"]["state"] == RunState.FAILED
