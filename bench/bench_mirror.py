"""Mirror benchmarks (issue 3 §7): initial sync and steady-state watch throughput.

Cluster: simcluster `large` (1,000 nodes, 10,000 devices in 2,000 slices) plus 10,000 ResourceClaims,
each allocated one device and reserved for its pod, and those 10,000 pods — created directly in the
simcluster store (controllers off, so nothing moves while we measure).

1. Initial sync: `manage.py mirror --once` work (list every kind over HTTP, write it all, derive the
   Device/Pool/Claim rows) into an empty database, against the anchor
   `kubectl get resourceslices,resourceclaims,pods -A -o json` on the same server. Target ≤ 2× kubectl.
2. Steady state: N pod updates are made in the store, then the mirror starts watching from its stored
   resourceVersions and applies them (one watch per kind, batched transactions, one broadcast per batch);
   events/s = N / time until the last is applied. Target ≥ 1,000 events/s.

Each database runs in its own worker process (Django binds its database at setup):

    .venv/bin/python bench/bench_mirror.py [--claims 10000] [--events 5000]
        [--database-url sqlite:////tmp/bench-mirror.sqlite3] [--database-url postgres://postgres@127.0.0.1:5432/dradash_bench]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "RESULTS.md"
DEFAULT_DBS = [
    "sqlite:////tmp/dradash-bench-mirror.sqlite3",
    "postgres://postgres@127.0.0.1:5432/dradash_bench_mirror",
]


def publish(lines: list[str], *, append: bool) -> None:
    """Print a result section and, when `append`, add it to bench/RESULTS.md (every bench script's end)."""
    print("\n".join(lines))
    if append:
        with RESULTS.open("a") as fh:
            fh.write("\n".join(lines) + "\n")
        print(f"appended to {RESULTS}")


def kubectl_path() -> str:
    candidates = [
        os.environ.get("DRADASH_KUBECTL", ""),
        "/tmp/kc/kubectl/kubectl",
        shutil.which("kubectl") or "",
    ]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("kubectl 1.37 not found: set DRADASH_KUBECTL")


# ------------------------------------------------------------------------------------------ cluster


def populate(store: Any, claims: int) -> None:
    """`claims` claims, each allocated one device of the large topology and reserved for its own pod."""
    devices = []
    for s in store.list("resourceslices"):
        for d in s["spec"].get("devices") or []:
            devices.append(
                (s["spec"]["driver"], s["spec"]["pool"]["name"], s["spec"].get("nodeName", ""), d["name"])
            )
    devices.sort()
    for i in range(claims):
        driver, pool, node, device = devices[i % len(devices)]
        name = f"bench-{i:05d}"
        claim = store.create(
            "resourceclaims",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "dev", "exactly": {"deviceClassName": driver}}]}},
            },
        )
        pod = store.create(
            "pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "labels": {"app": "bench"}},
                "spec": {
                    "nodeName": node,
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.example/bench:1",
                            "resources": {"claims": [{"name": "dev"}]},
                        }
                    ],
                    "resourceClaims": [{"name": "dev", "resourceClaimName": name}],
                },
            },
        )
        if i < len(devices):  # one allocation per device; extra claims stay pending
            claim["status"] = {
                "allocation": {
                    "devices": {
                        "results": [{"request": "dev", "driver": driver, "pool": pool, "device": device}]
                    }
                },
                "reservedFor": [{"resource": "pods", "name": name, "uid": pod["metadata"]["uid"]}],
            }
            store.update("resourceclaims", claim, subresource="status")


def time_kubectl(kubeconfig: str, repeat: int) -> tuple[float, int]:
    kubectl = kubectl_path()
    times = []
    size = 0
    for _ in range(repeat):
        started = time.perf_counter()
        out = subprocess.run(
            [
                kubectl,
                "--kubeconfig",
                kubeconfig,
                "get",
                "resourceslices,resourceclaims,pods",
                "-A",
                "-o",
                "json",
            ],
            check=True,
            capture_output=True,
        ).stdout
        times.append(time.perf_counter() - started)
        size = len(out)
    return statistics.median(times), size


# ------------------------------------------------------------------------------------------ worker


def fresh_database(url: str) -> None:
    if url.startswith("sqlite:////"):
        path = Path(url.removeprefix("sqlite:///"))
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    elif url.startswith("postgres"):
        import psycopg

        base, _, name = url.rpartition("/")
        with psycopg.connect(base + "/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')


def worker(args: argparse.Namespace) -> None:
    """Runs in a subprocess with DATABASE_URL set: fresh DB, timed sync, then the steady-state phase."""
    fresh_database(args.database_url)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror
    from inventory.models import Device, KubeObject, WatchState

    client = connect(args.kubeconfig)
    mirror = Mirror(client)
    started = time.perf_counter()
    mirror.sync_once()
    sync_seconds = time.perf_counter() - started
    report: dict[str, Any] = {
        "sync_seconds": sync_seconds,
        "objects": KubeObject.objects.count(),
        "devices": Device.objects.count(),
        "allocated": Device.objects.exclude(allocation_state="free").count(),
    }
    # Steady state: the parent makes N pod updates while no watch runs; then the mirror starts from the
    # stored resourceVersions and replays them from the watch as fast as it can apply them. (Timing a
    # live watch instead measures the store's write speed, ~300/s on this machine, not the mirror.)
    print("READY", flush=True)
    line = sys.stdin.readline().split()
    target_rv, count = int(line[1]), int(line[2])
    started = time.perf_counter()
    handle = mirror.start(resume=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        rv = WatchState.objects.filter(kind="pods").values_list("resource_version", flat=True).first() or "0"
        if int(rv) >= target_rv:
            break
        time.sleep(0.01)
    report["events"] = count
    report["events_seconds"] = time.perf_counter() - started
    report["batches"] = handle.applied_batches
    if not report["batches"]:
        raise SystemExit("no batch was applied: the measurement is void")
    report["relists"] = sum(r.health.relists for r in handle.reflectors)
    report["latency_ms"] = measure_latency(handle)
    handle.stop()
    print("RESULT " + json.dumps(report), flush=True)


def measure_latency(handle: Any) -> list[float]:
    """Cluster change → `inventory.changed` delivered to a member of the "inventory" group.

    The parent creates DeviceTaintRules annotated with their creation time (same machine, same clock);
    a thread here listens on the channel layer the mirror broadcasts to, as a websocket consumer would.
    """
    import asyncio
    import threading

    from channels.layers import get_channel_layer

    from dradash.realtime import register_server_loop
    from inventory.models import KubeObject

    # Like the ASGI server: one event loop owns the (in-memory) channel layer; the mirror's broadcasts
    # are scheduled onto it through dradash.realtime.
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    register_server_loop(loop)
    layer = get_channel_layer()
    received: list[tuple[float, list[str]]] = []
    done = threading.Event()

    async def listen() -> None:
        channel = await layer.new_channel()
        await layer.group_add("inventory", channel)
        ready.set()
        while not done.is_set():
            try:
                message = await asyncio.wait_for(layer.receive(channel), timeout=0.5)
            except TimeoutError:
                continue
            names = [c["name"] for c in message["changes"] if c["kind"] == "devicetaintrules"]
            if names:
                received.append((time.time(), names))

    ready = threading.Event()
    listener = asyncio.run_coroutine_threadsafe(listen(), loop)
    ready.wait(10)
    print("LATENCY-READY", flush=True)
    sys.stdin.readline()  # "LATENCY-DONE" once the parent has created every rule
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and handle.queue.unfinished_tasks != 0:
        time.sleep(0.05)
    time.sleep(1.0)  # let the last broadcast reach the listener
    done.set()
    listener.result(5)
    created = {
        o.name: float(((o.raw.get("metadata") or {}).get("annotations") or {}).get("bench/created", "0"))
        for o in KubeObject.objects.filter(kind="devicetaintrules", name__startswith="latency-")
    }
    latencies = []
    seen: set[str] = set()
    for at, names in received:
        for name in names:
            if name in created and name not in seen:
                seen.add(name)
                latencies.append((at - created[name]) * 1000)
    return latencies


# ------------------------------------------------------------------------------------------ parent


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"p50": float("nan"), "p99": float("nan"), "n": 0}
    pick = lambda q: ordered[min(len(ordered) - 1, int(len(ordered) * q))]  # noqa: E731
    return {"p50": pick(0.50), "p99": pick(0.99), "n": len(ordered)}


def run_backend(
    cluster: Any, kubeconfig: str, url: str, events: int, run: int, latency_changes: int = 200
) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--worker", "--kubeconfig", kubeconfig, "--database-url", url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdin and proc.stdout
    for line in proc.stdout:
        if line.startswith("READY"):
            break
    else:
        raise SystemExit(f"worker for {url} failed")
    pods = cluster.store.list("pods", namespace="default")
    t0 = time.time()
    last = None
    for i in range(events):
        pod = pods[i % len(pods)]
        # A label value unique to this run: re-applying an equal value would not change the object.
        tick = f"{run}-{i}"
        last = cluster.store.patch(
            "pods", pod["metadata"]["name"], {"metadata": {"labels": {"tick": tick}}}, namespace="default"
        )
    produced = time.time() - t0
    assert last is not None
    if int(last["metadata"]["resourceVersion"]) <= int(cluster.store.resource_version) - events:
        raise SystemExit("the pod updates did not change the objects; events would not be measured")
    proc.stdin.write(f"GO {last['metadata']['resourceVersion']} {events}\n")
    proc.stdin.flush()
    for line in proc.stdout:
        if line.startswith("LATENCY-READY"):
            break
    for i in range(latency_changes):
        rule = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceTaintRule",
            "metadata": {
                "name": f"latency-{run}-{i:04d}",
                "annotations": {"bench/created": repr(time.time())},
            },
            "spec": {
                "deviceSelector": {"driver": "gpu.example.com", "pool": f"node-{i % 1000:04d}"},
                "taint": {"key": "example.com/bench", "effect": "None"},
            },
        }
        cluster.store.create("devicetaintrules", rule)
        time.sleep(0.05)  # ~20 changes/s: an operator-paced stream, not a burst
    proc.stdin.write("LATENCY-DONE\n")
    proc.stdin.flush()
    report: dict[str, Any] = {}
    for line in proc.stdout:
        if line.startswith("RESULT "):
            report = json.loads(line.removeprefix("RESULT "))
    proc.wait(60)
    report["producer_events_per_s"] = events / produced
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-append", action="store_true", help="print only; do not append to RESULTS.md")
    parser.add_argument("--database-url", action="append", dest="database_urls")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        args.database_url = args.database_urls[0]
        worker(args)
        return

    from simcluster.app import start_simcluster

    tmp = Path(tempfile.mkdtemp(prefix="bench-mirror-"))
    kubeconfig = str(tmp / "kubeconfig")
    print("starting simcluster large …", flush=True)
    cluster = start_simcluster(
        topology="large", kubeconfig_path=Path(kubeconfig), controllers=False, history_size=100_000
    )
    try:
        populate(cluster.store, args.claims)
        kubectl_seconds, size = time_kubectl(kubeconfig, args.repeat)
        print(
            f"kubectl get resourceslices,resourceclaims,pods -A -o json: {kubectl_seconds:.2f}s "
            f"({size / 1e6:.1f} MB, median of {args.repeat})",
            flush=True,
        )
        rows = []
        for run, url in enumerate(args.database_urls or DEFAULT_DBS):
            backend = "PostgreSQL" if url.startswith("postgres") else "SQLite"
            report = run_backend(cluster, kubeconfig, url, args.events, run)
            ratio = report["sync_seconds"] / kubectl_seconds
            rate = report["events"] / report["events_seconds"]
            report["latency"] = percentiles(report["latency_ms"])
            print(
                f"{backend}: sync {report['sync_seconds']:.2f}s = {ratio:.2f}× kubectl "
                f"({report['objects']} objects, {report['devices']} devices, {report['allocated']} allocated); "
                f"steady state {rate:.0f} events/s applied ({report['events']} pod updates in "
                f"{report['batches']} batches, {report['relists']} re-lists)",
                flush=True,
            )
            print(f"{backend}: change → broadcast latency {report['latency']}", flush=True)
            rows.append((backend, report, ratio, rate))
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"\n## {stamp} — bench_mirror.py (inventory mirror)\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}. "
        f"Cluster: simcluster `large` (10,000 devices, 2,000 slices) + {args.claims} claims + {args.claims} pods.\n",
        f"Anchor: `kubectl get resourceslices,resourceclaims,pods -A -o json` = {kubectl_seconds:.2f} s "
        f"(median of {args.repeat}, {size / 1e6:.1f} MB).\n",
        "| database | initial sync (all 9 kinds, derived rows) | × kubectl (target ≤ 2) | watch events/s applied (target ≥ 1,000) | rule created → broadcast received, p50 / p99 (n) |",
        "|---|---|---|---|---|",
    ]
    for backend, report, ratio, rate in rows:
        lat = report["latency"]
        lines.append(
            f"| {backend} | {report['sync_seconds']:.2f} s | {ratio:.2f}× | {rate:.0f}/s "
            f"({report['events']} pod updates, {report['batches']} batches) | "
            f"{lat['p50']:.0f} ms / {lat['p99']:.0f} ms ({lat['n']}) |"
        )
    publish(lines, append=not args.no_append)


if __name__ == "__main__":
    main()
