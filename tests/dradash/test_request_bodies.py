"""Bodies over a real HTTP connection (uvicorn): a chunked body (no Content-Length) is read like a
declared one, and a body bigger than the server reads is refused with a 413 before it is spooled."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import Group, User

from dradash.tokens import api_token_create

MANIFEST = "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {}\n"


@pytest.fixture
def key(transactional_db: None) -> str:
    user = User.objects.create_user("vic", password="correct-horse-battery-staple-7")
    user.groups.add(Group.objects.get(name="viewer"))
    return api_token_create(user=user, name="bodies")[1]


def send(server: str, key: str, path: str, chunks: Iterator[bytes] | bytes) -> http.client.HTTPResponse:
    parts = urlsplit(server)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    headers = {"Authorization": f"Token {key}", "Content-Type": "application/json"}
    if isinstance(chunks, bytes):
        connection.request("POST", path, body=chunks, headers=headers)
    else:  # http.client sends an iterable body with Transfer-Encoding: chunked
        connection.request("POST", path, body=chunks, headers=headers, encode_chunked=True)
    return connection.getresponse()


def in_pieces(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_it_reads_a_chunked_api_body_like_a_declared_one(asgi_server: str, key: str) -> None:
    body = json.dumps({"yaml": MANIFEST}).encode()
    declared = send(asgi_server, key, "/api/migration/upgrade/", body)
    chunked = send(asgi_server, key, "/api/migration/upgrade/", in_pieces(body, 7))
    assert declared.status == chunked.status == 200
    assert json.loads(chunked.read()) == json.loads(declared.read())


def test_it_answers_a_chunked_body_over_the_api_limit_with_the_json_413(
    asgi_server: str, key: str, settings
) -> None:
    body = json.dumps({"yaml": "#" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)}).encode()
    response = send(asgi_server, key, "/api/migration/upgrade/", in_pieces(body, 64 * 1024))
    assert response.status == 413
    error = json.loads(response.read())["errors"][0]
    assert error["field"] == "body" and "DRADASH_MAX_BODY_BYTES" in error["message"]


def test_it_refuses_a_chunked_body_bigger_than_the_server_reads_before_spooling_it(
    asgi_server: str, key: str
) -> None:
    from dradash.asgi import _most_read_bytes

    body = b"x" * (_most_read_bytes() + 1)
    response = send(asgi_server, key, "/api/migration/upgrade/", in_pieces(body, 1 << 20))
    assert response.status == 413
    error = json.loads(response.read())["errors"][0]
    assert error["field"] == "body" and str(_most_read_bytes()) in error["message"]


def test_it_refuses_a_declared_body_bigger_than_the_server_reads_without_waiting_for_it(
    asgi_server: str, key: str
) -> None:
    from dradash.asgi import _most_read_bytes

    parts = urlsplit(asgi_server)
    declared = _most_read_bytes() + 1
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        head = (
            f"POST /migration/upgrade/ HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {declared}\r\n\r\n"
        )
        sock.sendall(head.encode() + b"yaml=")  # the rest never comes: the answer must not wait for it
        answer = sock.recv(65536).decode("latin-1")
    assert answer.startswith("HTTP/1.1 413 ")
    assert f"{declared} bytes" in answer


def test_a_request_without_a_body_is_answered_as_before(asgi_server: str) -> None:
    parts = urlsplit(asgi_server)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    connection.request("GET", "/accounts/login/")
    assert connection.getresponse().status == 200
