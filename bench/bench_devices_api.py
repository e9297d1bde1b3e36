"""Devices API latency at 10,000 devices (issue 3 §7): p95 server time per filter, target < 100 ms.

The database is filled the way production fills it: simcluster `large` (10,000 devices) plus claims
allocating most of them, mirrored with `Mirror.sync_once()`. Requests go through the whole Django stack
in-process (middleware, session auth, DRF, django-filter, pagination, serialisation) with the test
client; the time measured is the server's, without a network hop. The query count of each request is
printed too: it must not depend on the number of rows.

    .venv/bin/python bench/bench_devices_api.py [--database-url URL] [--claims 8000] [--requests 30]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
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

FILTERS: list[tuple[str, dict[str, str]]] = [
    ("first page (100)", {}),
    ("driver", {"driver": "gpu.example.com"}),
    ("state=allocated", {"state": "allocated"}),
    ("state=free + class", {"state": "free", "device_class": "nic.example.com"}),
    ("taint=any", {"taint": "any"}),
    ("attribute model=H100", {"attribute": "model=H100"}),
    ("node", {"node": "node-0500"}),
    ("search q", {"q": "gpu-3"}),
    ("deep page offset=9900", {"offset": "9900"}),
]

urlpatterns: list[Any] = []  # filled in main(): the API mounted at /api/ (as dradash/urls.py does)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default="sqlite:////tmp/dradash-bench-api.sqlite3")
    parser.add_argument("--claims", type=int, default=8000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--reuse", action="store_true", help="keep the database if it already holds devices")
    parser.add_argument(
        "--conn-max-age",
        type=int,
        default=None,
        help="override CONN_MAX_AGE (settings use 0: a new database connection per request)",
    )
    args = parser.parse_args()

    from bench_mirror import fresh_database, populate

    if not args.reuse:
        fresh_database(args.database_url)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
    import django

    django.setup()
    from django.conf import settings

    if args.conn_max_age is not None:
        settings.DATABASES["default"]["CONN_MAX_AGE"] = args.conn_max_age
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import override_settings, setup_test_environment
    from django.urls import include, path

    from inventory.models import Device

    call_command("migrate", verbosity=0)
    if not (args.reuse and Device.objects.count() >= 10_000):
        from inventory.kube import connect
        from inventory.mirror.runner import Mirror
        from simcluster.app import start_simcluster

        kubeconfig = Path(tempfile.mkdtemp(prefix="bench-api-")) / "kubeconfig"
        cluster = start_simcluster(topology="large", kubeconfig_path=kubeconfig, controllers=False)
        try:
            populate(cluster.store, args.claims)
            rule = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceTaintRule",
                "metadata": {"name": "maintenance-zone"},
                "spec": {
                    "deviceSelector": {"driver": "gpu.example.com", "pool": "node-0042"},
                    "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"},
                },
            }
            cluster.store.create("devicetaintrules", rule)
            Mirror(connect(str(kubeconfig))).sync_once()
        finally:
            cluster.stop()
    devices = Device.objects.count()
    print(f"{devices} devices in {connection.vendor}", flush=True)

    urlpatterns[:] = [path("api/", include("inventory.api.urls"))]
    setup_test_environment()
    user, _ = User.objects.get_or_create(username="bench-viewer")
    client = Client()
    client.force_login(user)
    rows = []
    all_times: list[float] = []
    with override_settings(ROOT_URLCONF=__name__, DEBUG=True):
        for label, params in FILTERS:
            times = []
            queries = 0
            count = 0
            for _ in range(args.requests):
                reset_queries()
                started = time.perf_counter()
                response = client.get("/api/devices/", params)
                times.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200, response.content[:300]
                queries = len(connection.queries)
                count = response.json()["count"]
            times.sort()
            p95 = times[max(0, int(len(times) * 0.95) - 1)]
            rows.append((label, count, statistics.median(times), p95, queries))
            all_times.extend(times)
            print(
                f"{label:28s} {count:6d} rows  p50 {statistics.median(times):6.1f} ms  p95 {p95:6.1f} ms  "
                f"{queries} queries",
                flush=True,
            )
    all_times.sort()
    overall = all_times[max(0, int(len(all_times) * 0.95) - 1)]
    print(f"overall p95 {overall:.1f} ms (target < 100 ms)")

    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    backend = "PostgreSQL" if connection.vendor == "postgresql" else "SQLite"
    lines = [
        f"\n## {stamp} — bench_devices_api.py (GET /api/devices/ at {devices} devices, {backend})\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"in-process test client, session auth, page size 100, {args.requests} requests per row, "
        f"CONN_MAX_AGE={settings.DATABASES['default'].get('CONN_MAX_AGE')}. "
        f"Target: p95 < 100 ms; queries per request independent of rows.\n",
        "| filter | matching rows | p50 ms | p95 ms | SQL queries |",
        "|---|---|---|---|---|",
        *[f"| {label} | {count} | {p50:.1f} | {p95:.1f} | {q} |" for label, count, p50, p95, q in rows],
        f"| **all** | | | **{overall:.1f}** | |",
    ]
    with RESULTS.open("a") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"appended to {RESULTS}")


if __name__ == "__main__":
    main()
