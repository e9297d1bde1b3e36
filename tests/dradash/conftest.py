"""Fixtures of the websocket and channel-layer tests: the real Redis, directly or behind a TCP cut."""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from tests.faults import TcpCut

REDIS_TEST_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/7"


@pytest.fixture
def redis_url() -> str:
    try:
        redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=1).ping()
    except redis.exceptions.RedisError:
        pytest.skip(f"Redis not reachable at {REDIS_TEST_URL}")
    return REDIS_TEST_URL


@pytest.fixture
def redis_through_cut(redis_url: str) -> Iterator[tuple[TcpCut, str]]:
    """A TcpCut in front of Redis and the URL that goes through it."""
    parts = urlsplit(redis_url)
    cut = TcpCut(parts.hostname or "127.0.0.1", parts.port or 6379)
    try:
        yield cut, urlunsplit(parts._replace(netloc=f"127.0.0.1:{cut.port}"))
    finally:
        cut.close()
