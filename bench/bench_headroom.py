"""Headroom of the `large` topology (1,000 nodes × (8 GPUs + 2 NICs) = 10,000 devices). Target: < 2 s.
Feasibility of two claims on the same snapshots, for reference.

Scenarios: the empty cluster, and one with a GPU in use on every other node (two kinds of node).
Anchor, measured in the same run: one JSON round trip of the topology's ResourceSlices — the least
any answer costs that reads the inventory once. Run: `.venv/bin/python bench/bench_headroom.py`.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
# Its own SQLite file, so the end-to-end row never touches a database someone else uses.
_BENCH_DB = Path(tempfile.mkdtemp(prefix="bench-headroom-")) / "bench.sqlite3"
os.environ["DATABASE_URL"] = f"sqlite:///{_BENCH_DB}"

import django  # noqa: E402

django.setup()

from allocation.snapshot import Snapshot, snapshot_from_objects  # noqa: E402
from allocation.whatif.kinds.feasibility import feasibility  # noqa: E402
from allocation.whatif.kinds.headroom import headroom  # noqa: E402
from allocation.whatif.subject import resolve_subject  # noqa: E402
from simcluster.controllers.driver import build_pool_slices  # noqa: E402
from simcluster.topology import load_topology  # noqa: E402

REPEATS = 3
TARGET_SECONDS = 2.0


def large_objects(*, busy_every: int = 0) -> dict[str, list[dict[str, Any]]]:
    topology = load_topology("large", workload_pods=0)
    slices: list[dict[str, Any]] = []
    for pool in topology.pools:
        for i, s in enumerate(
            build_pool_slices(
                driver=pool.driver,
                node=pool.node,
                pool=pool.pool_name,
                devices=pool.devices,
                counter_sets=pool.counter_sets,
                generation=1,
            )
        ):
            name = f"{pool.node}-{pool.driver}-{i}"
            s["metadata"] = {**s["metadata"], "name": name, "uid": f"uid-{name}"}
            slices.append(s)
    claims = []
    if busy_every:
        for n, node in enumerate(topology.nodes[::busy_every]):
            node_name = node["metadata"]["name"]
            claims.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": f"busy-{n}", "namespace": "default", "uid": f"busy-{n}"},
                    "spec": {
                        "devices": {
                            "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
                        }
                    },
                    "status": {
                        "allocation": {
                            "devices": {
                                "results": [
                                    {
                                        "request": "gpu",
                                        "driver": "gpu.example.com",
                                        "pool": node_name,
                                        "device": "gpu-0",
                                    }
                                ]
                            }
                        }
                    },
                }
            )
    return {
        "nodes": list(topology.nodes),
        "deviceclasses": list(topology.device_classes),
        "resourceslices": slices,
        "resourceclaims": claims,
    }


def timed(fn: Any) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def end_to_end(objects: dict[str, list[dict[str, Any]]]) -> tuple[float, float, int]:
    """Seconds to read the mirror (snapshot_load) and to answer, with the objects stored as the
    mirror stores them (one KubeObject row each, SQLite)."""
    from django.core.management import call_command

    import allocation.snapshot as snapshot_module
    from allocation.snapshot import snapshot_load
    from inventory.models import KubeObject, WatchState

    call_command("migrate", verbosity=0)
    KubeObject.objects.all().delete()
    rows = [
        KubeObject(
            kind=kind,
            uid=str(o["metadata"].get("uid") or f"{kind}-{o['metadata']['name']}"),
            name=o["metadata"]["name"],
            namespace=o["metadata"].get("namespace", ""),
            raw=o,
        )
        for kind, objs in objects.items()
        for o in objs
    ]
    KubeObject.objects.bulk_create(rows, batch_size=500)
    WatchState.objects.update_or_create(kind="resourceslices", defaults={"resource_version": "1"})

    def run() -> tuple[float, int]:
        snapshot_module._cached = None  # cold: measure decoding the mirror, not the per-process cache
        start = time.perf_counter()
        snapshot = snapshot_load()
        loaded = time.perf_counter() - start
        subject = resolve_subject(
            {"source": "class", "deviceClassName": "gpu.example.com", "count": 1}, snapshot
        )
        total = headroom(snapshot=snapshot, subject=subject, max_per_node=256)["total"]
        return loaded, total

    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        loaded, total = run()
        times.append((time.perf_counter() - start, loaded))
    times.sort()
    whole, loaded = times[len(times) // 2]
    return whole, loaded, total


def main() -> None:
    rows = []
    feasibility_rows: list[tuple[str, str, int, float]] = []
    anchor_s = 0.0
    for label, busy_every in (("empty", 0), ("1 GPU busy on every other node", 2)):
        objects = large_objects(busy_every=busy_every)
        snapshot: Snapshot = snapshot_from_objects(objects)
        devices = sum(len(s["spec"].get("devices") or []) for s in snapshot.slices)
        anchor_s, _ = timed(lambda s=snapshot: json.loads(json.dumps(s.slices)))
        subject = resolve_subject(
            {"source": "class", "deviceClassName": "gpu.example.com", "count": 1}, snapshot
        )
        for memo in (True, False):
            seconds, result = timed(
                lambda s=snapshot, j=subject, m=memo: headroom(
                    snapshot=s, subject=j, max_per_node=256, memo=m
                )
            )
            rows.append((label, devices, memo, seconds, result["total"], result["computed_nodes"], anchor_s))
        for count in (1, 9):
            claim = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"wants-{count}"},
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": count}}
                        ]
                    }
                },
            }
            asked = resolve_subject({"source": "yaml", "yaml": json.dumps(claim)}, snapshot)
            seconds, result = timed(lambda s=snapshot, j=asked: feasibility(snapshot=s, subject=j))
            feasibility_rows.append(
                (label, f"claim for {count} GPU{'s' if count > 1 else ''}", result["nodes_feasible"], seconds)
            )
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## bench_headroom.py — {now}",
        "",
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at end (other sessions share the machine), median of {REPEATS}. "
        "Headroom of 1 GPU (DeviceClass gpu.example.com) on `large`: copies placed node by node until none fits. "
        "Anchor: one JSON round trip of the topology's ResourceSlices, same run.",
        "",
        "| scenario | devices | nodes alike share an answer | copies | nodes computed | time | target < 2 s | × anchor |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, devices, memo, seconds, total, computed, anchor in rows:
        lines.append(
            f"| {label} | {devices:,} | {'yes' if memo else 'no'} | {total:,} | {computed:,} | {seconds:.2f} s | "
            f"{('met' if seconds < TARGET_SECONDS else 'MISSED') if memo else 'comparison'} | {seconds / anchor:.1f}× ({anchor * 1000:.0f} ms) |"
        )
    whole, loaded, total = end_to_end(large_objects(busy_every=2))
    lines += [
        "",
        f"End to end as a run does it (busy scenario, SQLite mirror rows): read the mirror {loaded:.2f} s + answer = "
        f"**{whole:.2f} s** for {total:,} copies ({'met' if whole < TARGET_SECONDS else 'MISSED'} the 2 s target).",
    ]
    lines += [
        "",
        "Feasibility on the same snapshots (every node tried; nodes that look alike share an answer):",
        "",
        "| scenario | question | nodes that fit | time |",
        "|---|---|---|---|",
        *[
            f"| {label} | {question} | {fit:,} | {seconds:.2f} s |"
            for label, question, fit, seconds in feasibility_rows
        ],
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if "--no-log" in sys.argv:
        return
    with (ROOT / "bench" / "RESULTS.md").open("a") as out:
        out.write("\n" + text)


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(_BENCH_DB.parent, ignore_errors=True)
