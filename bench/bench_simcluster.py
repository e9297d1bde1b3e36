"""simcluster list and watch throughput, so it never becomes the bottleneck of product benchmarks.

Scenarios (medians of ``--repeat`` runs, wall time):

* list, Python client: ``ResourceV1Api.list_resource_slice(_preload_content=False)`` then ``json.loads``
  — every ResourceSlice of the ``large`` topology (or 1,250 generated slices × 8 devices when the
  topology loader is absent).
* list, kubectl: ``kubectl get resourceslices -o json`` (process start and Go decoding included).
* watch throughput: events per second one raw HTTP watch client receives while a writer thread
  patches slices as fast as it can.

Anchor (same run, same machine): ``json.loads`` of the list body in this process — the least any
client must spend. The list ratio says how many times that the full HTTP round trip costs.

    .venv/bin/python bench/bench_simcluster.py [--repeat 5] [--watch-events 3000] [--no-record]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kubernetes import client, config  # noqa: E402

from simcluster.app import load_optional  # noqa: E402
from simcluster.store import Store  # noqa: E402
from simcluster.testing import run_simcluster  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"


def generate_slices(store: Store, slices: int = 1250, per_slice: int = 8) -> None:
    store.create("nodes", {"metadata": {"name": "bench-node"}})
    for n in range(slices):
        node = f"node-{n:04d}"
        devices = [
            {"name": f"gpu-{i}", "attributes": {"model": {"string": "h200"}, "index": {"int": i}},
             "capacity": {"memory": {"value": "141Gi"}}}
            for i in range(per_slice)
        ]  # fmt: skip
        store.create(
            "resourceslices",
            {"metadata": {"name": f"{node}-gpu.example.com"},
             "spec": {"driver": "gpu.example.com", "nodeName": node,
                      "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}},
        )  # fmt: skip


def kubectl_binary() -> Path | None:
    configured = os.environ.get("DRADASH_KUBECTL")
    if configured and Path(configured).exists():
        return Path(configured)
    try:
        from tests.kubectl import kubectl_binary as install

        return install()
    except Exception:
        fallback = Path("/tmp/kc/kubectl/kubectl")
        return fallback if fallback.exists() else None


def timed(fn: Any, repeat: int) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _read_events(url: str, since: int, events: int, context: ssl.SSLContext | None) -> float:
    """Seconds one raw HTTP watch client needs to receive `events` events after `since`."""
    received = 0
    begin = time.perf_counter()
    watch_url = f"{url}{SLICES}?watch=true&resourceVersion={since}&timeoutSeconds=300"
    with urllib.request.urlopen(watch_url, context=context) as r:
        for line in r:
            if line.strip():
                received += 1
            if received >= events:
                break
    return time.perf_counter() - begin


def watch_throughput(
    url: str, store: Store, events: int, context: ssl.SSLContext | None
) -> tuple[float, float, float]:
    """(writer patches/s, live events/s received during the writes, replay events/s from history)."""
    names = [s["metadata"]["name"] for s in store.list("resourceslices")][:200]
    start_rv = store.resource_version
    live: list[float] = []
    reader = threading.Thread(
        target=lambda: live.append(_read_events(url, start_rv, events, context)), daemon=True
    )
    reader.start()
    begin = time.perf_counter()
    for i in range(events):
        store.patch("resourceslices", names[i % len(names)], {"metadata": {"labels": {"bench": str(i)}}})
    writer_rate = events / (time.perf_counter() - begin)
    reader.join(300)
    replay = _read_events(url, start_rv, events, context)
    return writer_rate, events / live[0], events / replay


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--watch-events", type=int, default=3000)
    parser.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = parser.parse_args()

    topology = "large" if load_optional("simcluster.topology") is not None else None
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        with run_simcluster(topology=topology, kubeconfig_path=kubeconfig, controllers=False) as cluster:
            if topology is None:
                generate_slices(cluster.store)
            api = config.new_client_from_config(str(kubeconfig))
            resource_api = client.ResourceV1Api(api)

            def python_list() -> Any:
                return json.loads(resource_api.list_resource_slice(_preload_content=False).data)

            python_list()  # warm the connection
            python_s, body = timed(python_list, args.repeat)
            slices = len(body["items"])
            devices = sum(len(s["spec"].get("devices") or []) for s in body["items"])
            raw = json.dumps(body).encode()

            def fetch_bytes() -> bytes:
                with urllib.request.urlopen(cluster.url + SLICES, context=cluster.ssl_context()) as response:
                    data: bytes = response.read()
                return data

            transfer_s, _ = timed(fetch_bytes, args.repeat)
            anchor_s, _ = timed(lambda: json.loads(raw), args.repeat)

            kubectl_s: float | None = None
            binary = kubectl_binary()
            if binary is not None:
                command = [str(binary), "--kubeconfig", str(kubeconfig), "--cache-dir", f"{tmp}/cache",
                           "get", "resourceslices", "-o", "json"]  # fmt: skip
                subprocess.run(command, check=True, capture_output=True)
                kubectl_s, _ = timed(
                    lambda: subprocess.run(command, check=True, capture_output=True), args.repeat
                )

            writer_rate, live_rate, replay_rate = watch_throughput(
                cluster.url, cluster.store, args.watch_events, cluster.ssl_context()
            )
            api.close()

    lines = [
        f"- list {slices} ResourceSlices / {devices} devices ({len(raw) / 1e6:.1f} MB), Python client raw JSON: "
        f"{python_s * 1000:.0f} ms (json.loads anchor {anchor_s * 1000:.0f} ms, ratio {python_s / anchor_s:.1f}x); "
        f"server + transfer only (urllib, no parsing): {transfer_s * 1000:.0f} ms",
        f"- list, kubectl get resourceslices -o json: {kubectl_s * 1000:.0f} ms" if kubectl_s else
        "- list, kubectl: skipped (no kubectl binary)",
        f"- watch: {live_rate:,.0f} events/s received live while one writer patches slices at {writer_rate:,.0f}/s "
        f"(writer-bound: validation + patching); {replay_rate:,.0f} events/s when replaying "
        f"{args.watch_events} events from history",
    ]  # fmt: skip
    print("\n".join(lines))
    if not args.no_record:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        header = f"\n## simcluster list/watch — {stamp} ({platform.python_implementation()} "
        header += (
            f"{platform.python_version()}, {os.cpu_count()} cpus, topology {topology or 'generated'})\n\n"
        )
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(header + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
