"""The search box at 100,000 devices: the time of one search (every kind, the first 10 of each and the
counts, as /search/ draws it) against an anchor measured in the same run — the Devices page's own
search filter (`?q=`: its first 100 rows and its count), which the page already serves at this size.

Rows are written straight into the tables (bulk_create), shaped as the mirror writes them: 1,000 nodes
of 100 devices, 20,000 pods and 20,000 claims. Queries: an exact device name that matches on every node
(the worst case for "exact first"), a node name, a pod name, a part of a UUID, and a query matching
nothing (a full scan of each kind, bounded by nothing).

    .venv/bin/python bench/bench_search.py [--database-url URL] [--nodes 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
RESULTS = ROOT / "bench" / "RESULTS.md"

QUERIES = [
    ("exact device name on every node", "gpu-3"),
    ("a node", "node-0500"),
    ("a pod", "trainer-01234"),
    ("part of a UUID", "GPU-00a1"),
    ("nothing matches", "zzz-nothing"),
]


def populate(nodes: int) -> None:
    from inventory.models import Claim, Device, KubeObject, Pool

    per_node = 100
    batch: list[Device] = []
    for n in range(nodes):
        node = f"node-{n:04d}"
        for i in range(per_node):
            uuid = f"GPU-{n:04x}{i:04x}-aaaa"
            flat = {"uuid": uuid, "model": "H100", "gpu.example.com/uuid": uuid}
            batch.append(
                Device(
                    slice_uid=f"s-{node}",
                    slice_name=f"{node}-gpu",
                    driver="gpu.example.com",
                    pool=node,
                    name=f"gpu-{i}",
                    node_name=node,
                    attributes={"uuid": {"string": uuid}},
                    attributes_flat=flat,
                    attribute_index="\n" + "".join(f"{k}={v}\n" for k, v in flat.items()),
                    numa_node=i % 2,
                    allocation_state="allocated" if i % 3 else "free",
                )
            )
        if len(batch) >= 5000:
            Device.objects.bulk_create(batch)
            batch = []
    Device.objects.bulk_create(batch)
    Pool.objects.bulk_create(
        Pool(driver="gpu.example.com", name=f"node-{n:04d}", node_name=f"node-{n:04d}", device_count=per_node)
        for n in range(nodes)
    )
    KubeObject.objects.bulk_create(
        KubeObject(kind="nodes", uid=f"n-{n}", name=f"node-{n:04d}", raw={}) for n in range(nodes)
    )
    pods = nodes * 20
    KubeObject.objects.bulk_create(
        (
            KubeObject(
                kind="pods",
                uid=f"p-{p}",
                name=f"trainer-{p:05d}",
                namespace="ml",
                index_key=f"node-{p % nodes:04d}",
                raw={"status": {"phase": "Running"}},
            )
            for p in range(pods)
        ),
        batch_size=5000,
    )
    Claim.objects.bulk_create(
        (
            Claim(uid=f"c-{p}", namespace="ml", name=f"trainer-{p:05d}-gpu", owner_pod=f"trainer-{p:05d}")
            for p in range(pods)
        ),
        batch_size=5000,
    )


def timed(fn: object, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default="sqlite:////tmp/dradash-bench-search.sqlite3")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from bench_mirror import fresh_database

    fresh_database(args.database_url)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from dradash.search import search_groups
    from inventory.filters import DeviceFilterSet
    from inventory.models import Device

    load_start = os.getloadavg()[0]
    started = time.perf_counter()
    populate(args.nodes)
    fill = time.perf_counter() - started
    devices = Device.objects.count()

    def anchor(q: str) -> None:
        qs = DeviceFilterSet({"q": q}, queryset=Device.objects.all()).qs.order_by("driver", "pool", "name")
        qs.count()
        list(qs.values_list("id", flat=True)[:100])

    rows = []
    for label, q in QUERIES:
        search = timed(lambda q=q: search_groups(query=q, per_kind=10), args.repeat)  # type: ignore[misc]
        base = timed(lambda q=q: anchor(q), args.repeat)  # type: ignore[misc]
        reset_queries()
        with CaptureQueriesContext(connection) as queries:
            groups = search_groups(query=q, per_kind=10)
        found = ", ".join(f"{g.kind} {g.total}" for g in groups) or "none"
        rows.append((label, q, search, base, len(queries), found))

    vendor = connection.vendor
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "",
        f"## bench_search.py — {stamp}",
        "",
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, {vendor}, load average "
        f"{load_start:.1f} at start and {os.getloadavg()[0]:.1f} at the end (the machine is shared). "
        f"{devices:,} devices on {args.nodes:,} nodes, {args.nodes * 20:,} pods and claims (filled in {fill:.0f} s). "
        f"Median of {args.repeat}. Anchor: the Devices page's `?q=` search (count + first 100 ids) for the same query.",
        "",
        "| query | text | search, every kind (ms) | anchor (ms) | ratio | queries | found |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, q, search, base, count, found in rows:
        lines.append(
            f"| {label} | `{q}` | {search * 1000:.1f} | {base * 1000:.1f} | {search / base:.2f}× | {count} | {found} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    with RESULTS.open("a") as out:
        out.write(text)


if __name__ == "__main__":
    main()
