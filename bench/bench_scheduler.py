"""simcluster's scheduler in a burst (issue 12 §6): N one-GPU pods (a template claim each) at once on
`scale:<nodes>`, pods/s from the first pass to the last pod bound. Anchors: the same scheduler placing each pod
on the first feasible node (before it filtered and scored a sample of nodes), measured in the same run, and
kube-scheduler's scheduler_perf DRA figure (~250 pods/s, 6 CPUs).

The store runs in this process without its HTTP server or other controllers (they would share the CPU
and time themselves); each scheduled pod still makes every write the real path makes (claim created,
finalizer, allocation + reservedFor, binding, Running status, an Event), validated by the store. One
warm-up pod first builds the allocator (slices parsed once; in a live cluster it outlives bursts), and
that build is reported apart.

    .venv/bin/python bench/bench_scheduler.py [--nodes 3000] [--pods 1500] [--no-append]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "RESULTS.md"
ANCHOR_PODS_PER_S = 250


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=3000)
    parser.add_argument("--pods", type=int, default=1500)
    parser.add_argument("--no-append", action="store_true")
    parser.add_argument("--note", default="")
    args = parser.parse_args()

    from simcluster.controllers.scoring import feasible_nodes_to_find

    load_start = os.getloadavg()[0]
    # The anchor in the same run: the same scheduler placing each pod on the first feasible node from the
    # rotation (its behaviour before it filtered and scored a sample), then the scheduler as it is.
    runs = {
        mode: _burst(args.nodes, args.pods, sampled=mode == "sampled") for mode in ("first-fit", "sampled")
    }
    load_end = os.getloadavg()[0]
    sample = feasible_nodes_to_find(args.nodes)
    for mode, r in runs.items():
        print(f"{mode}: warm-up {r['warm']:.2f} s; {r['burst']} pods in {r['elapsed']:.2f} s = {r['rate']:.0f} pods/s "
              f"over {r['passes']} passes ({r['pending']} left pending, on {r['nodes_used']} nodes)")  # fmt: skip
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    first = runs["first-fit"]
    lines = [
        f"\n## {stamp} — bench_scheduler.py (simcluster scheduler burst, issue 12 §6)\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}, "
        f"load average {load_start:.1f} → {load_end:.1f}. simcluster `scale:{args.nodes}` in process, scheduler "
        f"alone. The scheduler filters until {sample} nodes fit (percentageOfNodesToScore, adaptive), scores "
        f"them and takes the best; anchor A: the same scheduler on the first feasible node, same run; anchor K: "
        f"kube-scheduler scheduler_perf DRA ≈ {ANCHOR_PODS_PER_S} pods/s (6 CPUs).\n",
        "| scheduler | nodes | pods | burst time (target ≤ 15 s) | pods/s (target ≥ 200) | ÷ A | ÷ K | passes | nodes used | allocator build (once) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, r in runs.items():
        lines.append(
            f"| {mode} | {args.nodes:,} | {r['burst']:,} | {r['elapsed']:.2f} s | {r['rate']:.0f} | "
            f"{r['rate'] / first['rate']:.2f}× | {r['rate'] / ANCHOR_PODS_PER_S:.2f}× | {r['passes']} | "
            f"{r['nodes_used']:,} | {r['warm']:.2f} s |"
        )
    if args.note:
        lines += ["", args.note]
    print("\n".join(lines))
    if not args.no_append:
        with RESULTS.open("a") as fh:
            fh.write("\n".join(lines) + "\n")


def _burst(nodes: int, pods: int, *, sampled: bool) -> dict[str, Any]:
    from simcluster.app import start_simcluster
    from simcluster.controllers.base import SystemClock
    from simcluster.controllers.scheduler import Scheduler
    from simcluster.topology import generated_workloads

    cluster = start_simcluster(
        topology=f"scale:{nodes}",
        kubeconfig_path=Path(tempfile.mkdtemp(prefix="bench-sched-")) / "kubeconfig",
        controllers=False,
        freeze_world=True,  # as `python -m simcluster` runs it
    )
    try:
        store = cluster.store
        workloads = list(generated_workloads(pods + 1))
        for plural, obj in workloads[:3]:  # namespace, template, the warm-up pod
            store.create(plural, obj)
        scheduler = Scheduler(store, clock=SystemClock())
        if not sampled:
            scheduler._sampled = lambda *a, **k: None  # type: ignore[method-assign]
        started = time.perf_counter()
        scheduler.reconcile()
        warm = time.perf_counter() - started
        for plural, obj in workloads[3:]:
            store.create(plural, obj)
        started = time.perf_counter()
        passes = 0
        while passes < 50:
            passes += 1
            scheduler.reconcile()
            if scheduler.scheduled >= pods + 1:
                break
        elapsed = time.perf_counter() - started
        burst = scheduler.scheduled - 1
        listed = store.list("pods")
        pending = sum(1 for p in listed if not (p.get("spec") or {}).get("nodeName"))
        used = len({(p.get("spec") or {}).get("nodeName") for p in listed} - {None})
    finally:
        cluster.stop()
    return {"warm": warm, "elapsed": elapsed, "burst": burst, "rate": burst / elapsed, "passes": passes,
            "pending": pending, "nodes_used": used}  # fmt: skip


if __name__ == "__main__":
    main()
