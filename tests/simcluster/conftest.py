"""Fixtures for driving simcluster through real clients: the official Python client and kubectl 1.37."""

from __future__ import annotations

import functools
import json
import os
import ssl
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from kubernetes import client, config

from simcluster.testing import SimCluster, run_simcluster

FALLBACK_KUBECTL = Path("/tmp/kc/kubectl/kubectl")


@functools.cache
def kubectl_path() -> Path:
    configured = os.environ.get("DRADASH_KUBECTL")
    if configured and Path(configured).exists():
        return Path(configured)
    try:
        from tests.kubectl import kubectl_binary

        return kubectl_binary()
    except Exception:
        if FALLBACK_KUBECTL.exists():
            return FALLBACK_KUBECTL
        raise


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SimCluster]:
    """An empty simcluster (no topology, no controllers) with a short bookmark interval."""
    with run_simcluster(
        topology=None, kubeconfig_path=tmp_path / "kubeconfig", controllers=False, bookmark_interval=0.3
    ) as running:
        yield running


@pytest.fixture(scope="module")
def shared_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[client.ApiClient]:
    """The official client on an empty simcluster shared by a module's tests: for tables whose cases
    write nothing (dry runs)."""
    kubeconfig = tmp_path_factory.mktemp("shared-cluster") / "kubeconfig"
    with run_simcluster(topology=None, kubeconfig_path=kubeconfig, controllers=False):
        api_client = config.new_client_from_config(str(kubeconfig))
        yield api_client
        api_client.close()


@pytest.fixture
def api(cluster: SimCluster) -> Iterator[client.ApiClient]:
    assert cluster.kubeconfig_path is not None
    api_client = config.new_client_from_config(str(cluster.kubeconfig_path))
    yield api_client
    api_client.close()


def raw_json(response: Any) -> Any:
    """The body of a `_preload_content=False` response."""
    return json.loads(response.data)


Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def kubectl(cluster: SimCluster, tmp_path: Path) -> Kubectl:
    """Run kubectl 1.37.1 against `cluster`; returns the CompletedProcess (check=False)."""
    binary = kubectl_path()
    cache = tmp_path / "kube-cache"

    def run(
        *args: str, input_text: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(binary), "--kubeconfig", str(cluster.kubeconfig_path), "--cache-dir", str(cache), *args],
            input=input_text,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "HOME": str(tmp_path), "KUBECTL_INTERACTIVE_DELETE": "false"},
        )

    return run


@pytest.fixture
def live(tmp_path: Path) -> Iterator[SimCluster]:
    """The `tiny` topology with every controller running; its kubeconfig at tmp_path/kubeconfig."""
    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kubeconfig") as running:
        yield running


def kubectl_out(tmp_path: Path, *args: str) -> str:
    """kubectl 1.37.1 on the `live` cluster: its output, the command having succeeded."""
    result = subprocess.run(
        [str(kubectl_path()), "--kubeconfig", str(tmp_path / "kubeconfig"), "--cache-dir", str(tmp_path / "cache"),
         *args], capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def kubectl_popen(cluster: SimCluster, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """Start a long-running kubectl (e.g. `get -w`)."""
    return subprocess.Popen(
        [str(kubectl_path()), "--kubeconfig", str(cluster.kubeconfig_path), "--cache-dir",
         str(tmp_path / "kube-cache"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip


class Http:
    """Plain HTTP(S) against the cluster, for wire-level assertions the typed client hides.

    Speaks TLS with the cluster's CA and, unless `admin` is False, the admin client certificate; one
    keep-alive connection pool, so a test's requests share a handshake."""

    def __init__(self, base_url: str, ssl_context: ssl.SSLContext | None = None) -> None:
        self.base_url = base_url
        self.pool = urllib3.PoolManager(ssl_context=ssl_context, retries=False, timeout=30.0)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any, Any]:
        data = None
        all_headers = dict(headers or {})
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            all_headers.setdefault("Content-Type", content_type)
        response = self.pool.request(method, self.base_url + path, body=data, headers=all_headers)
        raw = response.data
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode()
        return response.status, response.headers, parsed

    def get(self, path: str, **kwargs: Any) -> tuple[int, Any, Any]:
        return self.request("GET", path, **kwargs)

    def lines(self, path: str, timeout: float = 30) -> list[bytes]:
        """Every raw line of a streaming (watch) response, including any blank ones."""
        response = self.pool.request("GET", self.base_url + path, timeout=timeout)
        data: bytes = response.data
        return data.split(b"\n")


@pytest.fixture
def http(cluster: SimCluster) -> Http:
    return Http(cluster.url, cluster.ssl_context())
