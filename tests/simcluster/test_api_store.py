"""The in-process Store API the simulated controllers use."""

from __future__ import annotations

import base64
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from simcluster.errors import ApiError
from simcluster.store import Store
from simcluster.testing import SimCluster
from tests.simcluster.conftest import Http
from tests.simcluster.samples import sample


def test_it_starts_with_the_system_namespaces() -> None:
    names = [ns["metadata"]["name"] for ns in Store().list("namespaces")]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]


def test_it_hands_out_copies_that_callers_may_change() -> None:
    store = Store()
    store.create("deviceclasses", sample("deviceclasses"))
    mine = store.get("deviceclasses", "gpu.example.com")
    mine["spec"]["selectors"].clear()
    store.list("deviceclasses")[0]["metadata"]["name"] = "changed"
    assert store.get("deviceclasses", "gpu.example.com")["spec"]["selectors"]
    assert store.list("deviceclasses")[0]["metadata"]["name"] == "gpu.example.com"


def test_it_calls_subscribers_after_every_committed_change_in_order() -> None:
    store = Store()
    seen: list[tuple[str, str, str]] = []
    unsubscribe = store.subscribe(
        lambda kind, plural, obj: seen.append((kind, plural, obj["metadata"]["name"]))
    )
    store.create("deviceclasses", sample("deviceclasses"))
    store.patch("deviceclasses", "gpu.example.com", {"metadata": {"labels": {"a": "b"}}})
    store.create("deviceclasses", sample("deviceclasses", name="dry-run"), dry_run=True)
    with pytest.raises(ApiError):
        store.create("deviceclasses", sample("deviceclasses"))
    store.delete("deviceclasses", "gpu.example.com")
    unsubscribe()
    store.create("deviceclasses", sample("deviceclasses", name="unseen"))
    assert seen == [
        ("ADDED", "deviceclasses", "gpu.example.com"),
        ("MODIFIED", "deviceclasses", "gpu.example.com"),
        ("DELETED", "deviceclasses", "gpu.example.com"),
    ]


def test_it_counts_one_global_resource_version_across_kinds() -> None:
    store = Store()
    start = store.resource_version
    a = store.create("deviceclasses", sample("deviceclasses"))
    b = store.create("resourceclaims", sample("resourceclaims"))
    deleted = store.delete("deviceclasses", "gpu.example.com")
    assert [int(o["metadata"]["resourceVersion"]) for o in (a, b, deleted)] == [
        start + 1,
        start + 2,
        start + 3,
    ]
    assert store.resource_version == start + 3


def test_it_keeps_no_change_updates_silent() -> None:
    store = Store()
    created = store.create("deviceclasses", sample("deviceclasses"))
    again = store.update("deviceclasses", created)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_it_forgets_history_beyond_its_bound() -> None:
    store = Store(history_size=3)
    old = store.resource_version
    for i in range(5):
        store.create("deviceclasses", sample("deviceclasses", name=f"c{i}"))
    with pytest.raises(ApiError) as raised:
        store.open_watch("deviceclasses", namespace=None, since_rv=old, deliver=lambda e: None)
    assert raised.value.status == 410
    _, _, backlog, unsubscribe = store.open_watch(
        "deviceclasses", namespace=None, since_rv=store.resource_version - 2, deliver=lambda e: None
    )
    unsubscribe()
    assert [e.entry.obj["metadata"]["name"] for e in backlog] == ["c3", "c4"]


def test_it_is_safe_to_write_from_many_threads() -> None:
    store = Store()

    def writer(n: int) -> None:
        for i in range(50):
            store.create("deviceclasses", sample("deviceclasses", name=f"t{n}-{i}"))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    items = store.list("deviceclasses")
    assert len(items) == 200
    assert len({o["metadata"]["resourceVersion"] for o in items}) == 200


def test_it_lets_a_kubelet_finish_graceful_pod_deletion() -> None:
    store = Store(graceful_pod_deletion=True)
    pod = sample("pods")
    pod["spec"]["nodeName"] = "node-a"
    store.create("pods", pod)
    terminating = store.delete("pods", "web", namespace="default")
    assert terminating["metadata"]["deletionTimestamp"]
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    assert store.get("pods", "web", namespace="default")
    store.delete("pods", "web", namespace="default", grace_period_seconds=0)
    with pytest.raises(ApiError):
        store.get("pods", "web", namespace="default")


def test_it_deletes_collections_by_selector(http: Http, cluster: SimCluster) -> None:
    for name, tier in (("a", "gold"), ("b", "silver"), ("c", "gold")):
        cluster.store.create("deviceclasses", sample("deviceclasses", name=name, labels={"tier": tier}))
    status, _, body = http.request(
        "DELETE", "/apis/resource.k8s.io/v1/deviceclasses?labelSelector=tier%3Dgold"
    )
    assert status == 200
    assert [i["metadata"]["name"] for i in body["items"]] == ["a", "c"]
    assert [c["metadata"]["name"] for c in cluster.store.list("deviceclasses")] == ["b"]


def test_it_forgets_a_watch_whose_client_went_away(cluster: SimCluster) -> None:
    context = cluster.ssl_context()
    assert context is not None
    with (
        socket.create_connection(("127.0.0.1", cluster.port)) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as sock,
    ):
        sock.sendall(b"GET /apis/resource.k8s.io/v1/deviceclasses?watch=true HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.recv(100)
        assert cluster.server.open_watches == 1
    deadline = time.monotonic() + 30
    while cluster.server.open_watches and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cluster.server.open_watches == 0


def test_it_serves_from_the_command_line_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "simcluster", "--topology", "none", "--listen", f"127.0.0.1:{port}",
         "--kubeconfig", str(kubeconfig), "--no-controllers"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith(f"simcluster serving https://127.0.0.1:{port}")
        config = yaml.safe_load(kubeconfig.read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        with urllib.request.urlopen(
            f"https://127.0.0.1:{port}/readyz", timeout=10, context=ssl.create_default_context(cadata=ca)
        ) as response:
            assert response.read() == b"ok"
        assert config["current-context"] == "simcluster"
        assert config["clusters"][0]["cluster"]["server"] == f"https://127.0.0.1:{port}"
        assert config["users"][0]["user"]["client-certificate-data"]
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0


def test_it_runs_the_tiny_world_for_the_shared_fixture(simcluster: SimCluster) -> None:
    http = Http(simcluster.url, simcluster.ssl_context())
    _, _, slices = http.get("/apis/resource.k8s.io/v1/resourceslices")
    assert slices["items"], "the driver published the topology's slices"
    _, _, nodes = http.get("/api/v1/nodes")
    assert {n["metadata"]["name"] for n in nodes["items"]} >= {"node-0", "node-1", "node-2"}
    assert simcluster.controllers is not None
    assert simcluster.kubeconfig_path is not None and simcluster.kubeconfig_path.exists()


def test_it_tells_each_kinds_latest_change_apart() -> None:
    store = Store()
    assert store.revision("deviceclasses") == 0
    created = store.create("deviceclasses", sample("deviceclasses"))
    assert store.revision("deviceclasses") == int(created["metadata"]["resourceVersion"])
    store.create("resourceclaims", sample("resourceclaims"))  # another kind: this one's revision stays
    assert store.revision("deviceclasses") == int(created["metadata"]["resourceVersion"])
    labelled = store.patch("deviceclasses", "gpu.example.com", {"metadata": {"labels": {"a": "b"}}})
    assert store.revision("deviceclasses") == int(labelled["metadata"]["resourceVersion"])
    store.delete("deviceclasses", "gpu.example.com")
    assert store.revision("deviceclasses") == store.resource_version
