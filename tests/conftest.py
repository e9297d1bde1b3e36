"""Shared fixtures. The simulated cluster runs in-process on a free loopback port; product code
reaches it only over HTTP through the kubeconfig it writes."""

from __future__ import annotations

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
