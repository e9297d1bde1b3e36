"""simcluster's scheduler in a burst (issue 12 §6): N one-GPU pods (a template claim each) at once on
`scale:<nodes>`, pods/s from the first pass to the last pod bound, against kube-scheduler's scheduler_perf
DRA figure (~250 pods/s, 6 CPUs) as the anchor.

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

    from simcluster.app import start_simcluster
    from simcluster.controllers.base import SystemClock
    from simcluster.controllers.scheduler import Scheduler
    from simcluster.topology import generated_workloads

    load_start = os.getloadavg()[0]
    cluster = start_simcluster(
        topology=f"scale:{args.nodes}",
        kubeconfig_path=Path(tempfile.mkdtemp(prefix="bench-sched-")) / "kubeconfig",
        controllers=False,
    )
    try:
        store = cluster.store
        workloads = list(generated_workloads(args.pods + 1))
        for plural, obj in workloads[:3]:  # namespace, template, the warm-up pod
            store.create(plural, obj)
        scheduler = Scheduler(store, clock=SystemClock())
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
            if scheduler.scheduled >= args.pods + 1:
                break
        elapsed = time.perf_counter() - started
        burst = scheduler.scheduled - 1
        pending = sum(1 for p in store.list("pods") if not (p.get("spec") or {}).get("nodeName"))
    finally:
        cluster.stop()
    rate = burst / elapsed
    load_end = os.getloadavg()[0]
    print(f"warm-up (allocator build, {args.nodes * 2} slices): {warm:.2f} s")
    print(
        f"{burst} pods in {elapsed:.2f} s = {rate:.0f} pods/s over {passes} passes ({pending} left pending)"
    )
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"\n## {stamp} — bench_scheduler.py (simcluster scheduler burst, issue 12 §6)\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}, "
        f"load average {load_start:.1f} → {load_end:.1f}. simcluster `scale:{args.nodes}` in process, scheduler "
        f"alone; anchor: kube-scheduler scheduler_perf DRA ≈ {ANCHOR_PODS_PER_S} pods/s (6 CPUs).\n",
        "| nodes | pods | burst time (target ≤ 15 s) | pods/s (target ≥ 200) | ÷ anchor | passes | allocator build (once) |",
        "|---|---|---|---|---|---|---|",
        f"| {args.nodes:,} | {burst:,} | {elapsed:.2f} s | {rate:.0f} | {rate / ANCHOR_PODS_PER_S:.2f}× | {passes} | {warm:.2f} s |",
    ]
    if args.note:
        lines += ["", args.note]
    print("\n".join(lines))
    if not args.no_append:
        with RESULTS.open("a") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
