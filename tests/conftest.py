"""Shared fixtures. The simulated cluster runs in-process on a free loopback port; product code
reaches it only over HTTP through the kubeconfig it writes."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def simcluster(tmp_path: Path) -> Iterator[object]:
    """A running simcluster with the small `tiny` topology (a few nodes, GPUs and NICs)."""
    from simcluster.testing import run_simcluster

    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kubeconfig") as cluster:
        yield cluster


@pytest.fixture
def empty_simcluster(tmp_path: Path) -> Iterator[object]:
    """A running simcluster with no topology: only the API server, no driver objects."""
    from simcluster.testing import run_simcluster

    with run_simcluster(topology=None, kubeconfig_path=tmp_path / "kubeconfig") as cluster:
        yield cluster


@pytest.fixture(scope="session")
def kubectl_path() -> Path:
    """Path of the real kubectl 1.37.1 binary (installed into the cache on first use)."""
    from tests.kubectl import kubectl_binary

    return kubectl_binary()


@pytest.fixture(autouse=True)
def fresh_channel_layer() -> Iterator[None]:
    """Each test gets its own channel layer instance. The Redis layer binds its locks to the event
    loop that first used it, and pytest-asyncio gives every async test a new loop."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def asgi_server(transactional_db: None) -> Iterator[str]:
    """uvicorn serving dradash.asgi on a free port, in a thread of this process (so it shares the test DB).

    Playwright's sync API runs an event loop in the test thread, so the server must live elsewhere; tests
    of what only a real server does (chunked bodies, the body-size guard in front of Django) use it too.
    """
    import uvicorn

    from dradash.asgi import WEBSOCKET_PROTOCOL, application

    port = _free_port()
    config = uvicorn.Config(
        application, host="127.0.0.1", port=port, lifespan="off", log_level="warning", ws=WEBSOCKET_PROTOCOL
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="e2e-uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
