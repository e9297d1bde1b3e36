"""Maintenance progress latency (issue 5): 1,000 pods evicted under one DeviceTaintRule, and how long
each eviction takes to reach an open progress page.

Set-up: simcluster `large` with 1,000 one-GPU workload pods (ReplicaSets), the dashboard served by
uvicorn in this process, the mirror watching simcluster, a websocket client on /ws/maintenance/<id>/
logged in as an operator. The maintenance selects every GPU (one rule, `driver: gpu.example.com`) and
is enforced with NoExecute through the product's service; the simulated eviction controller deletes
the pods one after another.

Measured per pod: time from the cluster event (the pod's DELETE committed in the simcluster store, seen
by a store subscriber — same process, same clock) to the first progress document on the websocket that
shows the pod as gone. Anchor in the same run: the time from the same cluster event to the raw
Kubernetes watch (a plain HTTP watch on pods through the official client's connection) seeing it.
Target: p99 < 1 s end to end.

    .venv/bin/python bench/bench_maintenance.py [--pods 1000] [--database-url sqlite:////tmp/x.sqlite3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "RESULTS.md"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--database-url", default="sqlite:////tmp/dradash-bench-maintenance.sqlite3")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()

    if args.database_url.startswith("sqlite:////"):
        Path(args.database_url[len("sqlite:///") :]).unlink(missing_ok=True)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
    os.environ["DRADASH_EMBEDDED_WORKER"] = "false"

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    asyncio.run(run(args))


async def run(args: argparse.Namespace) -> None:
    import uvicorn
    import websockets
    from asgiref.sync import sync_to_async
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from dradash.asgi import application
    from inventory.kube import connect
    from inventory.mirror import Mirror, wait_for_sync
    from inventory.models import Device
    from maintenance.planning import DeviceRef
    from maintenance.services import Draft, maintenance_apply, maintenance_create
    from simcluster.testing import run_simcluster

    tmp = Path(tempfile.mkdtemp(prefix="bench-maint-"))
    started = time.perf_counter()
    with run_simcluster(
        topology="large", kubeconfig_path=tmp / "kubeconfig", workload_pods=args.pods
    ) as cluster:
        assert cluster.controllers.wait_idle(args.timeout), "the scheduler did not settle"
        settings.DRADASH_KUBECONFIG = str(cluster.kubeconfig_path)
        running = [p for p in cluster.store.list("pods") if p.get("spec", {}).get("nodeName")]
        print(
            f"cluster ready: {len(running)} pods placed in {time.perf_counter() - started:.1f}s", flush=True
        )

        mirror = Mirror(connect(str(cluster.kubeconfig_path))).start()
        assert await sync_to_async(wait_for_sync)(mirror, timeout=args.timeout), "mirror did not sync"

        def make_user() -> tuple[Any, str]:
            user, _ = User.objects.get_or_create(username="bench-operator")
            user.groups.add(Group.objects.get_or_create(name="operator")[0])
            client = Client()
            client.force_login(user)
            return user, client.cookies["sessionid"].value

        user, session = await sync_to_async(make_user)()
        devices = await sync_to_async(
            lambda: [DeviceRef(d, p, n) for d, p, n in Device.objects.filter(driver="gpu.example.com")
                     .values_list("driver", "pool", "name")]
        )()  # fmt: skip
        maintenance = await sync_to_async(maintenance_create)(
            user=user,
            draft=Draft(title="bench: every GPU", reason="benchmark", ticket="", key="example.com/bench",
                        value="", effect="NoExecute", devices=devices, filters={"driver": "gpu.example.com"}),
        )  # fmt: skip
        # Whole pools collapse; to get exactly one rule, target the driver as a whole.
        maintenance.rules = [
            {"name": f"dradash-{maintenance.id}-all-gpus", "selector": {"driver": "gpu.example.com"}}
        ]
        await sync_to_async(maintenance.save)()

        config = uvicorn.Config(application, host="127.0.0.1", port=0, lifespan="on", log_level="warning")
        server = uvicorn.Server(config)
        serve = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]

        deleted_at: dict[str, float] = {}
        watch_seen: dict[str, float] = {}
        gone_seen: dict[str, float] = {}

        def on_change(event_type: str, plural: str, obj: dict[str, Any]) -> None:
            if plural == "pods" and event_type == "DELETED":
                deleted_at.setdefault(obj["metadata"]["uid"], time.time())

        unsubscribe = cluster.store.subscribe(on_change)

        def raw_watch(stop: threading.Event) -> None:
            client = connect(str(cluster.kubeconfig_path))
            rv = str(cluster.store.resource_version)
            while not stop.is_set():
                for event_type, obj in client.watch_objects("pods", resource_version=rv, timeout_seconds=5):
                    rv = obj.get("metadata", {}).get("resourceVersion", rv)
                    if event_type == "DELETED":
                        watch_seen.setdefault(obj["metadata"]["uid"], time.time())

        stop = threading.Event()
        watcher = threading.Thread(target=raw_watch, args=(stop,), daemon=True)
        watcher.start()

        uri = f"ws://127.0.0.1:{port}/ws/maintenance/{maintenance.id}/"
        headers = {"Cookie": f"sessionid={session}", "Origin": f"http://127.0.0.1:{port}"}
        messages = 0
        async with websockets.connect(uri, additional_headers=headers, max_size=64 * 1024 * 1024) as ws:
            first = json.loads(await ws.recv())
            assert first["type"] == "progress"
            t_enforce = time.time()
            await sync_to_async(maintenance_apply)(
                maintenance=maintenance, user=user, effect="NoExecute", confirmed=True
            )
            await sync_to_async(maintenance.refresh_from_db)()
            total = len(maintenance.affected)
            print(f"enforced: {total} pods affected", flush=True)
            deadline = time.time() + args.timeout
            while time.time() < deadline:
                try:
                    message = json.loads(
                        await asyncio.wait_for(ws.recv(), timeout=max(0.1, deadline - time.time()))
                    )
                except TimeoutError:
                    break
                now = time.time()
                messages += 1
                for pod in message["progress"]["pods"]:
                    if pod["state"] == "gone":
                        gone_seen.setdefault(pod["uid"], now)
                if message["progress"]["counts"]["gone"] >= total:
                    break
        t_done = time.time()
        stop.set()
        unsubscribe()
        server.should_exit = True
        await serve
        mirror.stop()

    end_to_end = [gone_seen[u] - deleted_at[u] for u in gone_seen if u in deleted_at]
    anchor = [watch_seen[u] - deleted_at[u] for u in watch_seen if u in deleted_at]
    e2e_ms = [v * 1000 for v in end_to_end]
    anchor_ms = [v * 1000 for v in anchor]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    db = args.database_url.split(":", 1)[0]
    load = os.getloadavg()[0]
    lines = [
        f"\n## bench_maintenance.py — {stamp}\n",
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load average {load:.1f} "
        f"at the end; database {db}; {total} pods evicted under one rule (simcluster `large`, uvicorn + mirror in "
        f"one process); {messages} progress messages in {t_done - t_enforce:.1f} s.\n",
        "| path | pods measured | p50 | p95 | p99 | max |",
        "|---|---|---|---|---|---|",
        f"| cluster event → raw watch (anchor) | {len(anchor_ms)} | {percentile(anchor_ms, 50):.0f} ms | "
        f"{percentile(anchor_ms, 95):.0f} ms | {percentile(anchor_ms, 99):.0f} ms | {max(anchor_ms, default=0):.0f} ms |",
        f"| cluster event → progress page (websocket) | {len(e2e_ms)} | {percentile(e2e_ms, 50):.0f} ms | "
        f"{percentile(e2e_ms, 95):.0f} ms | {percentile(e2e_ms, 99):.0f} ms | {max(e2e_ms, default=0):.0f} ms |",
        "",
        f"Target p99 < 1,000 ms: {'met' if e2e_ms and percentile(e2e_ms, 99) < 1000 else 'MISSED'}; "
        f"median ratio to the raw watch: {statistics.median(e2e_ms) / max(statistics.median(anchor_ms), 0.001):.1f}×"
        if e2e_ms and anchor_ms
        else "no measurements",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    with RESULTS.open("a") as f:
        f.write(text)


if __name__ == "__main__":
    main()
