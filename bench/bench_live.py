"""Cluster change → websocket message latency (issue 3 §7: p99 < 250 ms).

simcluster (`demo` topology) runs in its own process; this process runs the dashboard (uvicorn, the
mirror) and two websocket clients: a Devices page's socket (`/ws/inventory/`, coalesced per page) and the
automation stream (`/ws/api/inventory/`). N DeviceTaintRules are created and deleted one after another
through the Kubernetes API, `--interval` seconds apart; for each change we time from the API server's
answer (the change is committed in the cluster) to the first websocket message that reports a
devicetaintrules change. Anchor in the same run: a plain watch on devicetaintrules in the same process.

    .venv/bin/python bench/bench_live.py [--changes 200] [--interval 0.1] [--database-url URL ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
RESULTS = ROOT / "bench" / "RESULTS.md"

from bench_maintenance import free_port, percentile, row  # noqa: E402


def start_cluster(tmp: Path) -> tuple[subprocess.Popen[bytes], Path]:
    port = free_port()
    kubeconfig = tmp / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "simcluster", "--topology", "demo", "--listen", f"127.0.0.1:{port}",
         "--kubeconfig", str(kubeconfig), "--log-level", "WARNING"],
        cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not kubeconfig.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(3)  # the demo workloads settle
    return process, kubeconfig


def child(args: argparse.Namespace) -> None:
    if args.database_url.startswith("sqlite:////"):
        for suffix in ("", "-wal", "-shm"):
            Path(args.database_url[len("sqlite:///") :] + suffix).unlink(missing_ok=True)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "dradash.settings"
    os.environ["DRADASH_EMBEDDED_WORKER"] = "false"
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    if args.database_url.startswith("postgres"):
        call_command("migrate", interactive=False, verbosity=0)
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", interactive=False, verbosity=0)
    cluster, kubeconfig = start_cluster(Path(tempfile.mkdtemp(prefix="bench-live-")))
    try:
        result = asyncio.run(measure(args, kubeconfig))
    finally:
        cluster.terminate()
        cluster.wait(timeout=30)
    print("RESULT " + json.dumps(result), flush=True)


async def measure(args: argparse.Namespace, kubeconfig: Path) -> dict[str, Any]:
    import threading

    import uvicorn
    import websockets
    from asgiref.sync import sync_to_async
    from django.contrib.auth.models import User
    from django.test import Client

    from dradash.asgi import application
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror, wait_for_sync

    mirror = await sync_to_async(Mirror(connect(str(kubeconfig))).start)()
    assert await sync_to_async(wait_for_sync)(mirror, timeout=120)

    def session() -> str:
        client = Client()
        client.force_login(User.objects.get_or_create(username="bench-viewer")[0])
        return str(client.cookies["sessionid"].value)

    cookie = await sync_to_async(session)()
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=0, lifespan="on", log_level="warning")
    )
    serving = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    headers = {"Cookie": f"sessionid={cookie}", "Origin": f"http://127.0.0.1:{port}"}

    page_seen: list[float] = []
    stream_seen: list[float] = []
    watch_seen: list[float] = []

    async def follow(path: str, seen: list[float], match: Any) -> None:
        async with websockets.connect(f"ws://127.0.0.1:{port}{path}", additional_headers=headers) as ws:
            async for raw in ws:
                message = json.loads(raw)
                if match(message):
                    seen.append(time.time())

    def page_match(m: dict[str, Any]) -> bool:
        return m.get("type") == "changed" and (m.get("kinds") is None or "devicetaintrules" in m["kinds"])

    def stream_match(m: dict[str, Any]) -> bool:
        return m.get("type") == "changes" and any(c.get("kind") == "devicetaintrules" for c in m["changes"])

    tasks = [
        asyncio.ensure_future(follow("/ws/inventory/", page_seen, page_match)),
        asyncio.ensure_future(follow("/ws/api/inventory/?kinds=devicetaintrules", stream_seen, stream_match)),
    ]
    client = connect(str(kubeconfig))
    stop = threading.Event()

    def raw_watch() -> None:
        rv = client.list_objects("devicetaintrules", limit=1)[1]
        while not stop.is_set():
            for event_type, obj in client.watch_objects(
                "devicetaintrules", resource_version=rv, timeout_seconds=5
            ):
                rv = obj.get("metadata", {}).get("resourceVersion", rv)
                if event_type in ("ADDED", "DELETED"):
                    watch_seen.append(time.time())

    watcher = threading.Thread(target=raw_watch, daemon=True)
    watcher.start()
    await asyncio.sleep(1.0)

    committed: list[float] = []
    page_lat: list[float] = []
    stream_lat: list[float] = []
    watch_lat: list[float] = []
    for i in range(args.changes):
        name = f"bench-live-{i // 2}"
        counts = (len(page_seen), len(stream_seen), len(watch_seen))
        if i % 2 == 0:
            rule = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name},
                    "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": f"worker-{i % 16:02d}",
                                                "device": "gpu-0"},
                             "taint": {"key": "example.com/bench", "effect": "None"}}}  # fmt: skip
            await asyncio.to_thread(client.create_object, "devicetaintrules", rule)
        else:
            await asyncio.to_thread(client.delete_object, "devicetaintrules", name)
        t0 = time.time()
        committed.append(t0)
        deadline = t0 + 5
        while time.time() < deadline and (
            len(page_seen) == counts[0] or len(stream_seen) == counts[1] or len(watch_seen) == counts[2]
        ):
            await asyncio.sleep(0.002)
        if len(page_seen) > counts[0]:
            page_lat.append((page_seen[counts[0]] - t0) * 1000)
        if len(stream_seen) > counts[1]:
            stream_lat.append((stream_seen[counts[1]] - t0) * 1000)
        if len(watch_seen) > counts[2]:
            watch_lat.append((watch_seen[counts[2]] - t0) * 1000)
        await asyncio.sleep(args.interval)
    stop.set()
    for task in tasks:
        task.cancel()
    server.should_exit = True
    await serving
    mirror.stop()
    return {"changes": args.changes, "page": page_lat, "stream": stream_lat, "watch": watch_lat}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--database-url", action="append")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.database_url = args.database_url[0]
        child(args)
        return
    urls = args.database_url or [
        "sqlite:////tmp/dradash-bench-live.sqlite3",
        "postgres://postgres@127.0.0.1:5432/dradash_bench_live",
    ]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"\n## bench_live.py — {stamp}\n",
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs. simcluster `demo` in its own "
        f"process; {args.changes} DeviceTaintRule creates/deletes {args.interval} s apart; from the API server's "
        "answer to the first websocket message reporting it (dashboard: uvicorn + mirror in one process).\n",
        "| database · path | changes | p50 | p95 | p99 | max |",
        "|---|---|---|---|---|---|",
    ]
    verdicts = []
    for url in urls:
        if url.startswith("postgres"):
            name = url.rsplit("/", 1)[1]
            subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-c", f"CREATE DATABASE {name}"],
                           capture_output=True, check=False)  # fmt: skip
        out = subprocess.run(
            [sys.executable, __file__, "--child", "--changes", str(args.changes), "--interval", str(args.interval),
             "--database-url", url],
            capture_output=True, text=True, cwd=ROOT, timeout=1800,
        )  # fmt: skip
        result = next((json.loads(x[7:]) for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
        if result is None:
            raise SystemExit(f"child failed:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
        db = url.split(":", 1)[0]
        lines.append(row(f"{db} · plain watch in the same process (anchor)", result["watch"]))
        lines.append(row(f"{db} · automation stream /ws/api/inventory/", result["stream"]))
        lines.append(row(f"{db} · Devices page socket /ws/inventory/", result["page"]))
        p99 = max(percentile(result["stream"], 99), percentile(result["page"], 99))
        verdicts.append(f"{db}: p99 {p99:.0f} ms — target < 250 ms {'met' if p99 < 250 else 'MISSED'}")
    lines += ["", *[f"- {v}" for v in verdicts], f"- load average at the end: {os.getloadavg()[0]:.1f}"]
    text = "\n".join(lines) + "\n"
    print(text)
    with RESULTS.open("a") as f:
        f.write(text)


if __name__ == "__main__":
    main()
