"""Fault hooks: in-process and over the `/_simcluster/` control paths."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from kubernetes import client, watch

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http
from tests.simcluster.samples import sample

CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"


def test_it_compacts_history_over_http(cluster: SimCluster, http: Http) -> None:
    old = cluster.store.resource_version
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    status, _, body = http.request("POST", "/_simcluster/compact")
    assert status == 200 and body["compactedResourceVersion"] == cluster.store.resource_version
    lines = http.lines(f"{CLASSES}?watch=true&resourceVersion={old}")
    assert json.loads(lines[0])["object"]["code"] == 410


def test_it_drops_open_watches_and_the_python_client_reconnects(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    resource_api = client.ResourceV1Api(api)
    cluster.store.create("deviceclasses", sample("deviceclasses", name="first"))
    stream = watch.Watch()
    seen = []
    for event in stream.stream(resource_api.list_device_class):  # no timeout: the client reconnects by itself
        seen.append((event["type"], event["object"].metadata.name))
        if event["object"].metadata.name == "first":
            assert cluster.faults.drop_watches() == 1
            cluster.store.create("deviceclasses", sample("deviceclasses", name="second"))
        else:
            stream.stop()
    assert seen == [("ADDED", "first"), ("ADDED", "second")]


def test_it_drops_watches_over_http(cluster: SimCluster, http: Http) -> None:
    result: list[list[bytes]] = []
    reader = threading.Thread(target=lambda: result.append(http.lines(f"{CLASSES}?watch=true", timeout=60)))
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    reader.start()
    deadline = time.monotonic() + 30
    while cluster.server.open_watches == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # wait until the reader's watch is registered
    _, _, body = http.request("POST", "/_simcluster/drop-watches")
    assert body == {"dropped": 1}
    reader.join(30)
    assert result and json.loads(result[0][0])["type"] == "ADDED"


def test_it_restarts_on_the_same_port_keeping_state(cluster: SimCluster, api: client.ApiClient) -> None:
    resource_api = client.ResourceV1Api(api)
    resource_api.create_device_class(sample("deviceclasses"))
    port = cluster.port
    cluster.faults.restart()
    assert cluster.server.restarts == 1
    assert cluster.port == port
    assert [c.metadata.name for c in resource_api.list_device_class().items] == ["gpu.example.com"]


def test_it_restarts_over_http(cluster: SimCluster, http: Http) -> None:
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    status, _, _ = http.request("POST", "/_simcluster/restart")
    assert status == 200
    deadline = time.monotonic() + 30
    while cluster.server.restarts == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # the restart runs just after the answer
    assert cluster.server.restarts == 1
    listed = None
    while listed is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(
                cluster.url + CLASSES, timeout=5, context=cluster.ssl_context()
            ) as response:
                listed = json.loads(response.read())
        except OSError:
            time.sleep(0.01)  # not listening yet
    assert listed is not None
    assert [i["metadata"]["name"] for i in listed["items"]] == ["gpu.example.com"]


def test_it_adds_latency_to_every_answer(cluster: SimCluster, http: Http) -> None:
    status, _, body = http.request("POST", "/_simcluster/latency?ms=5")
    assert status == 200 and body == {"latencyMs": 5}
    assert cluster.server.latency_ms == 5
    assert http.get(CLASSES)[0] == 200
    cluster.faults.set_latency(0)
    assert cluster.server.latency_ms == 0


def test_it_keeps_a_python_client_watch_going_across_a_restart(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    resource_api = client.ResourceV1Api(api)
    cluster.store.create("deviceclasses", sample("deviceclasses", name="first"))
    stream = watch.Watch()
    seen = []
    for event in stream.stream(resource_api.list_device_class):
        seen.append((event["type"], event["object"].metadata.name))
        if event["object"].metadata.name == "first":
            cluster.faults.restart()
            cluster.store.create("deviceclasses", sample("deviceclasses", name="second"))
        else:
            stream.stop()
    assert seen == [("ADDED", "first"), ("ADDED", "second")]


def test_it_marks_a_device_unhealthy_and_healthy_over_the_control_path(tmp_path: Path) -> None:
    import json
    import urllib.error
    import urllib.request

    from simcluster.testing import run_simcluster

    def post(url: str) -> tuple[int, dict[str, Any]]:
        try:
            request = urllib.request.Request(url, method="POST")
            with urllib.request.urlopen(request, timeout=10, context=cluster.ssl_context()) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def taints(cluster: Any) -> list[dict[str, Any]]:
        return [
            t
            for s in cluster.store.list("resourceslices")
            if s["spec"]["pool"]["name"] == "node-1" and s["spec"]["driver"] == "gpu.example.com"
            for d in s["spec"].get("devices", [])
            if d["name"] == "gpu-2"
            for t in d.get("taints", [])
        ]

    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kc") as cluster:
        base = f"{cluster.url}/_simcluster"
        status, body = post(
            f"{base}/device-unhealthy?driver=gpu.example.com&node=node-1&device=gpu-2&effect=NoSchedule"
        )
        assert status == 200 and body["taint"]["effect"] == "NoSchedule"
        assert [t["effect"] for t in taints(cluster)] == ["NoSchedule"]
        status, _ = post(f"{base}/device-healthy?driver=gpu.example.com&node=node-1&device=gpu-2")
        assert status == 200 and taints(cluster) == []
        status, body = post(f"{base}/device-unhealthy?driver=gpu.example.com&node=node-1&device=gpu-99")
        assert status == 400 and "gpu-99" in body["message"]
        status, body = post(f"{base}/device-unhealthy?driver=gpu.example.com")
        assert status == 400 and "node, device: required" in body["message"]


def test_it_calls_the_fault_hooks_with_the_kubeconfig_admin_from_the_ctl_helper(tmp_path: Path) -> None:
    import subprocess
    import sys

    from simcluster.testing import run_simcluster

    root = Path(__file__).resolve().parents[2]

    def ctl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "simcluster", "ctl", "--kubeconfig", str(kubeconfig), *args],
                              capture_output=True, text=True, timeout=60, cwd=root)  # fmt: skip

    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kc") as cluster:
        done = ctl(
            tmp_path / "kc", "device-unhealthy", "driver=gpu.example.com", "node=node-1", "device=gpu-2"
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["taint"]["effect"] == "NoExecute"
        viewer = cluster.user_kubeconfig(tmp_path / "viewer", user="viewer")
        refused = ctl(viewer, "compact")
        assert refused.returncode == 1
        assert (
            json.loads(refused.stdout)["message"]
            == 'forbidden: User "viewer" cannot post path "/_simcluster/compact"'
        )
