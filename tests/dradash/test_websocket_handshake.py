"""A websocket handshake over a real connection (uvicorn with the protocol production runs) is answered,
whatever its length: an over-long request line is refused at once, never left hanging."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest


def handshake(server: str, path: str) -> str:
    parts = urlsplit(server)
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        f"Origin: {server}\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request.encode())
        return sock.recv(4096).decode("latin-1")  # a hang is a socket.timeout here, not an answer


@pytest.mark.parametrize("length", [100, 8_000, 10_000, 70_000])
def test_it_answers_a_websocket_handshake_whatever_the_length_of_its_path(
    asgi_server: str, length: int
) -> None:
    answer = handshake(asgi_server, "/ws/" + "a" * length)
    assert answer.startswith("HTTP/1.1 ")
    assert answer.split(" ", 2)[1] in {"101", "400", "403", "404", "414"}, answer[:80]
