"""Fault hooks: in-process and over the `/_simcluster/` control paths."""

from __future__ import annotations

import json
import threading
import urllib.request

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
    reader = threading.Thread(target=lambda: result.append(http.lines(f"{CLASSES}?watch=true", timeout=30)))
    cluster.store.create("deviceclasses", sample("deviceclasses"))
    reader.start()
    deadline_polls = 0
    while True:
        _, _, body = http.request("POST", "/_simcluster/drop-watches")
        if body["dropped"] or deadline_polls > 500:
            break
        deadline_polls += 1
        threading.Event().wait(0.01)
    reader.join(30)
    assert result and json.loads(result[0][0])["type"] == "ADDED"


def test_it_restarts_on_the_same_port_keeping_state(cluster: SimCluster, api: client.ApiClient) -> None:
    resource_api = client.ResourceV1Api(api)
    resource_api.create_device_class(sample("deviceclasses"))
    port = cluster.port
    cluster.faults.restart()
    assert cluster.port == port
    assert [c.metadata.name for c in resource_api.list_device_class().items] == ["gpu.example.com"]


def test_it_restarts_over_http(cluster: SimCluster, http: Http) -> None:
    status, _, _ = http.request("POST", "/_simcluster/restart")
    assert status == 200
    for _ in range(1000):
        try:
            with urllib.request.urlopen(cluster.url + "/readyz", timeout=5) as response:
                if response.status == 200:
                    break
        except OSError:
            threading.Event().wait(0.01)
    assert http.get("/version")[2]["gitVersion"] == "v1.37.1"


def test_it_adds_latency_to_every_answer(cluster: SimCluster, http: Http) -> None:
    status, _, body = http.request("POST", "/_simcluster/latency?ms=5")
    assert status == 200 and body == {"latencyMs": 5}
    assert cluster.server.latency_ms == 5
    assert http.get(CLASSES)[0] == 200
    cluster.faults.set_latency(0)
    assert cluster.server.latency_ms == 0
