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
    from inventory.mirror import Mirror
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
    handle.stop()
    print("RESULT " + json.dumps(report), flush=True)


# ------------------------------------------------------------------------------------------ parent


def run_backend(cluster: Any, kubeconfig: str, url: str, events: int, run: int) -> dict[str, Any]:
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
            print(
                f"{backend}: sync {report['sync_seconds']:.2f}s = {ratio:.2f}× kubectl "
                f"({report['objects']} objects, {report['devices']} devices, {report['allocated']} allocated); "
                f"steady state {rate:.0f} events/s applied ({report['events']} pod updates in "
                f"{report['batches']} batches, {report['relists']} re-lists)",
                flush=True,
            )
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
        "| database | initial sync (all 9 kinds, derived rows) | × kubectl (target ≤ 2) | watch events/s applied (target ≥ 1,000) |",
        "|---|---|---|---|",
    ]
    for backend, report, ratio, rate in rows:
        lines.append(
            f"| {backend} | {report['sync_seconds']:.2f} s | {ratio:.2f}× | {rate:.0f}/s "
            f"({report['events']} pod updates, {report['batches']} batches) |"
        )
    with RESULTS.open("a") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"appended to {RESULTS}")


if __name__ == "__main__":
    main()
