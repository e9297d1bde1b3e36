"""Web latency while what-if runs are going (issue 10): API p95 idle, and with two heavy runs going.
Target: the loaded p95 at most 2× the idle p95 (both measured in the same run: the idle p95 is the
anchor).

Two layouts of the same code, each a uvicorn server on its own port over one SQLite file:

- `process` (the product): the embedded worker is a child process of the web server, started by the
  ASGI lifespan as `manage.py demo` and `uvicorn dradash.asgi:application` run it;
- `thread` (the layout before, for contrast): the same worker loop (`allocation.worker.Worker`) in a
  thread of the web process.

This process is the client: it asks for two heavy feasibility runs (8 + 9 GPUs of 16 on one node: the
search tries millions of combinations, ~25 s each alone), waits until both are busy in the allocator,
and times sequential API reads (`GET /api/whatif/runs/`, `GET /api/objects/?kind=nodes`) with
keep-alive — then how long a trivial run of another user takes to finish while the heavy ones go.

    .venv/bin/python bench/bench_whatif_isolation.py [--requests 200] [--no-record]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
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
DRIVER = "gpu.example.com"
HEAVY_CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "hard", "namespace": "default"},
    "spec": {
        "devices": {
            "requests": [
                {"name": "a", "exactly": {"deviceClassName": DRIVER, "count": 8}},
                {"name": "b", "exactly": {"deviceClassName": DRIVER, "count": 9}},
            ]
        }
    },
}
TRIVIAL = {"kind": "headroom", "input": {"source": "class", "deviceClassName": DRIVER, "max_per_node": 4}}
READS = ("/api/whatif/runs/?limit=20", "/api/objects/?kind=nodes&limit=20")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- the inventory


def objects() -> list[tuple[str, dict[str, Any]]]:
    def meta(name: str, namespace: str = "") -> dict[str, Any]:
        m: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "resourceVersion": "1"}
        return {**m, "namespace": namespace} if namespace else m

    out: list[tuple[str, dict[str, Any]]] = [
        ("deviceclasses", {"kind": "DeviceClass", "metadata": meta(DRIVER),
                           "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}),
    ]  # fmt: skip
    for node, count in [("node-h", 16), *((f"node-{i}", 8) for i in range(20))]:
        out.append(
            (
                "nodes",
                {"kind": "Node", "metadata": {**meta(node), "labels": {"kubernetes.io/hostname": node}}},
            )
        )
        devices = [{"name": f"gpu-{d}", "attributes": {"model": {"string": "A100"}}} for d in range(count)]
        spec = {"driver": DRIVER, "nodeName": node, "devices": devices,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}  # fmt: skip
        out.append(
            ("resourceslices", {"kind": "ResourceSlice", "metadata": meta(f"{node}-gpus"), "spec": spec})
        )
    return out


def prepare(database_url: str) -> dict[str, str]:
    """Migrate, store the inventory, and make one API token per user."""
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from inventory.models import KubeObject

    call_command("migrate", verbosity=0)
    for kind, obj in objects():
        m = obj["metadata"]
        KubeObject.objects.create(
            kind=kind, uid=m["uid"], name=m["name"], namespace=m.get("namespace", ""), raw=obj
        )
    return {
        name: Token.objects.create(user=User.objects.create_user(name)).key for name in ("heavy", "light")
    }


# --------------------------------------------------------------------------- the servers


def serve_with_thread_worker(port: int) -> None:
    """The layout before: the worker loop in a thread of the web process."""
    import threading

    import django

    django.setup()
    import uvicorn

    from allocation.worker import Worker
    from dradash.asgi import application

    worker = Worker(threads=4, poll_seconds=0.2)
    threading.Thread(target=worker.run, daemon=True).start()
    uvicorn.run(application, host="127.0.0.1", port=port, lifespan="off", log_level="warning")


def start_server(layout: str, port: int, database_url: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "dradash.settings",
        "DRADASH_WHATIF_TIME_LIMIT": "600",
        "DRADASH_WHATIF_MAX_SEARCH_STEPS": str(10**9),
        "DRADASH_EMBEDDED_WORKER": "true" if layout == "process" else "false",
        "REDIS_URL": "",
        "DRADASH_CELERY_BROKER_URL": "",
    }
    if layout == "process":
        command = [sys.executable, "-m", "uvicorn", "dradash.asgi:application", "--host", "127.0.0.1",
                   "--port", str(port), "--lifespan", "on", "--log-level", "warning"]  # fmt: skip
    else:
        command = [sys.executable, __file__, "--serve-with-thread-worker", str(port)]
    return subprocess.Popen(command, cwd=ROOT, env=env)


class Client:
    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        payload = json.dumps(body) if body is not None else None
        try:
            self.conn.request(method, path, body=payload, headers=self.headers)
            response = self.conn.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            self.conn.close()  # the server closed an idle keep-alive connection: open a new one
            self.conn.request(method, path, body=payload, headers=self.headers)
            response = self.conn.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else None

    def timed_reads(self, count: int, *, budget_s: float = 30.0) -> list[float]:
        times: list[float] = []
        stop = time.monotonic() + budget_s
        for i in range(count):
            start = time.perf_counter()
            status, _ = self.call("GET", READS[i % len(READS)])
            times.append(time.perf_counter() - start)
            assert status == 200, status
            if time.monotonic() > stop:
                break
        return times


def wait_for(check: Any, what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not after {timeout} s")
        time.sleep(0.1)
    return value


def trivial_run_seconds(client: Client) -> float:
    start = time.perf_counter()
    status, body = client.call("POST", "/api/whatif/runs/", TRIVIAL)
    assert status == 202, body
    run_id = body["id"]
    wait_for(lambda: client.call("GET", f"/api/whatif/runs/{run_id}/")[1]["finished"], "trivial run", 300)
    return time.perf_counter() - start


def measure(layout: str, database_url: str, tokens: dict[str, str], requests: int) -> dict[str, Any]:
    port = free_port()
    server = start_server(layout, port, database_url)
    try:
        heavy, light = Client(port, tokens["heavy"]), Client(port, tokens["light"])
        wait_for(lambda: _up(heavy), f"{layout} server up")
        heavy.timed_reads(20)  # warm up
        idle = heavy.timed_reads(requests)
        trivial_idle = trivial_run_seconds(light)
        runs = []
        for _ in range(2):
            status, body = heavy.call("POST", "/api/whatif/runs/", {"kind": "feasibility", "input": {
                "source": "yaml", "yaml": json.dumps(HEAVY_CLAIM)}})  # fmt: skip
            assert status == 202, body
            runs.append(body["id"])
        wait_for(lambda: all(_busy(heavy, r) for r in runs), "both heavy runs busy", 120)
        loaded = heavy.timed_reads(requests)
        still = all(_busy(heavy, r) for r in runs)
        trivial_loaded = trivial_run_seconds(light)
        return {
            "layout": layout,
            "idle": idle,
            "loaded": loaded,
            "heavy_still_running": still,
            "trivial_idle": trivial_idle,
            "trivial_loaded": trivial_loaded,
        }
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _up(client: Client) -> bool:
    try:
        return client.call("GET", READS[0])[0] == 200
    except OSError:
        client.conn.close()
        return False


def _busy(client: Client, run_id: str) -> bool:
    body = client.call("GET", f"/api/whatif/runs/{run_id}/")[1]
    return bool(body["state"] == "running" and body["phase"] == "trying each node")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--no-record", action="store_true")
    parser.add_argument("--serve-with-thread-worker", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_with_thread_worker:
        serve_with_thread_worker(args.serve_with_thread_worker)
        return
    load_start = os.getloadavg()[0]
    database_url = f"sqlite:///{Path(tempfile.mkdtemp(prefix='bench-whatif-')) / 'bench.sqlite3'}"
    tokens = prepare(database_url)
    rows, notes = [], []
    for layout in ("process", "thread"):
        r = measure(layout, database_url, tokens, args.requests)
        idle95, loaded95 = percentile(r["idle"], 95), percentile(r["loaded"], 95)
        ratio = loaded95 / idle95
        label = (
            "worker process (product)" if layout == "process" else "worker thread in the web process (before)"
        )
        rows.append(
            f"| {label} | {len(r['loaded'])} | {ms(statistics.median(r['idle']))} | {ms(idle95)} | "
            f"{ms(statistics.median(r['loaded']))} | {ms(loaded95)} | {ms(max(r['loaded']))} | {ratio:.1f}× | "
            f"{r['trivial_idle']:.1f} s → {r['trivial_loaded']:.1f} s |"
        )
        verdict = "met" if ratio <= 2 else "MISSED"
        still = "" if r["heavy_still_running"] else " (the heavy runs had finished before the end: re-run)"
        notes.append(f"- {label}: loaded p95 / idle p95 = {ratio:.2f} — target ≤ 2× {verdict}{still}")
        print(rows[-1], flush=True)
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = "\n".join(
        [
            f"## bench_whatif_isolation.py — {now}",
            "",
            f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load average "
            f"{load_start:.1f} at start, {os.getloadavg()[0]:.1f} at end (other sessions share the machine). "
            "uvicorn over SQLite; two heavy feasibility runs (8 + 9 GPUs of 16 on one node) of one user going; "
            f"{args.requests} sequential keep-alive reads of {' and '.join(f'`{p}`' for p in READS)}. "
            "Anchor: the idle p95 of the same server in the same run. Last column: a trivial headroom run of "
            "another user, POST to finished, idle → with the heavy runs going.",
            "",
            "| layout | reads | idle p50 | idle p95 | loaded p50 | loaded p95 | loaded max | p95 ratio | trivial run |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            *notes,
            "",
        ]
    )
    print(text)
    if not args.no_record:
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write("\n" + text)


if __name__ == "__main__":
    main()
