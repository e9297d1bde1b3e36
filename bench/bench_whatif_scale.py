"""What-if at scale (issue 12 §5): feasibility and headroom end to end at 10k / 30k / 100k devices.

Cluster: simcluster `scale:<nodes>` (8 GPUs + 2 NICs a node) with `--rules` one-pool DeviceTaintRules
(effect None) and 4 allocated claims (+ pods) per node, as bench_scale.py builds it, written straight
into the mirror's rows of a SQLite file (one KubeObject row per object, as the mirror stores them).

A worker process (only Django and the database, so its RSS is a what-if worker's) then, per size:
- anchors, same run: a JSON round trip of the slices; the first snapshot load (the mirror decoded);
- end to end as the worker runs it (`whatif_run_execute`: the run row, the snapshot, the answer, the
  result written): a 2-GPU feasibility and a one-GPU headroom — the first run (cold caches) and the
  median of 3 after it; and after an unrelated claim changed (the snapshot brought up to date);
- with `--redis URL`: the headroom answer split across `--workers` Celery workers (solo pool, same
  database) against the same answer in one process, first and median of 3 warm runs; the same for two
  taint impacts (NoExecute on `--taint-nodes` nodes' GPUs; and with the free half tainted too), their
  sharded answer checked equal to the unsharded one, and their node scans one after another in one
  process (all nodes, no node, each shard: the ceiling of the speed-up);
- peak RSS of the worker (VmHWM) after the first load and after the runs.

    .venv/bin/python bench/bench_whatif_scale.py --nodes 1000 --nodes 3000 [--redis redis://127.0.0.1:6379/14]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
RESULTS = ROOT / "bench" / "RESULTS.md"
KINDS = [
    "deviceclasses",
    "resourceslices",
    "resourceclaims",
    "resourceclaimtemplates",
    "devicetaintrules",
    "pods",
    "nodes",
    "poddisruptionbudgets",
]
FEASIBILITY = {
    "source": "yaml",
    "yaml": json.dumps(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "two-gpus", "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}
                    ]
                }
            },
        }
    ),
}
HEADROOM = {"source": "class", "deviceClassName": "gpu.example.com", "count": 1}
# A template whose selector reads each GPU's uuid: no two nodes look alike, every node is computed.
DISTINCT_CLAIM = {
    "devices": {
        "requests": [
            {
                "name": "gpu",
                "exactly": {
                    "deviceClassName": "gpu.example.com",
                    "selectors": [
                        {"cel": {"expression": 'device.attributes["gpu.example.com"].uuid != "none"'}}
                    ],
                },
            }
        ]
    }
}
DISTINCT = {
    "source": "yaml",
    "yaml": json.dumps(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "not-that-gpu", "namespace": "default"},
            "spec": {"spec": DISTINCT_CLAIM},
        }
    ),
}


NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def taint_question(nodes: list[int]) -> dict[str, Any]:
    """NoExecute on every GPU of these nodes (by number): the pods on them (8 a node on the first half,
    none on the second) are evicted, and each is placed again on the first node with a free untainted
    GPU, past the full half of the cluster, or nowhere."""
    return {
        "selectors": [{"driver": "gpu.example.com", "pool": f"node-{i:04d}"} for i in nodes],
        "taint": {"key": "example.com/maintenance", "value": "", "effect": "NoExecute"},
    }


def taint_questions(args: argparse.Namespace, cluster_nodes: int) -> list[tuple[str, dict[str, Any]]]:
    """The few pods of `--taint-nodes` nodes, then the same with the free half of the cluster tainted
    too (nowhere to go: every pod is tried on every node, so the work splits evenly by node)."""
    few = list(range(args.taint_nodes))
    return [
        ("taint ", taint_question(few)),
        ("taint, free half too, ", taint_question([*few, *range(cluster_nodes // 2, cluster_nodes)])),
    ]


def rss_mb() -> float:
    """This process's peak RSS (VmHWM; ru_maxrss would carry over the parent's peak across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def django_setup(db: str) -> None:
    os.environ["DATABASE_URL"] = db  # a database URL (sqlite:////path or postgres://…)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
    import django

    django.setup()


# ------------------------------------------------------------------------------------------ build


def build(nodes: int, rules: int, db: str) -> dict[str, Any]:
    from bench_mirror import fresh_database, populate

    from simcluster.app import load_world
    from simcluster.store import Store

    started = time.perf_counter()
    store = Store()
    load_world(store, f"scale:{nodes}:rules={rules}", controllers=False, options={})
    populate(store, nodes * 4)
    objects = {k: store.list(k) for k in KINDS}
    fresh_database(db)
    django_setup(db)
    from django.core.management import call_command

    from inventory.models import KubeObject, WatchState

    call_command("migrate", verbosity=0)
    rows = (
        KubeObject(
            kind=kind,
            uid=o["metadata"]["uid"],
            name=o["metadata"]["name"],
            namespace=o["metadata"].get("namespace", ""),
            resource_version=o["metadata"].get("resourceVersion", ""),
            raw=o,
        )
        for kind, objs in objects.items()
        for o in objs
    )
    batch: list[Any] = []
    for row in rows:
        batch.append(row)
        if len(batch) == 2000:
            KubeObject.objects.bulk_create(batch)
            batch = []
    KubeObject.objects.bulk_create(batch)
    for kind in KINDS:
        WatchState.objects.update_or_create(kind=kind, defaults={"resource_version": "1", "state": "synced"})
    devices = sum(len(s["spec"].get("devices") or []) for s in objects["resourceslices"])
    return {"devices": devices, "build_s": time.perf_counter() - started}


# ------------------------------------------------------------------------------------------ worker


def run_once(kind: str, data: dict[str, Any], user: Any) -> tuple[float, dict[str, Any]]:
    from allocation.models import RunState, WhatIfRun
    from allocation.services import whatif_run_create, whatif_run_execute

    started = time.perf_counter()
    run = whatif_run_create(kind=kind, input=data, user=user)
    whatif_run_execute(run_id=str(run.pk))
    elapsed = time.perf_counter() - started
    run = WhatIfRun.objects.get(pk=run.pk)
    assert run.state == RunState.SUCCEEDED, (run.state, run.error)
    return elapsed, run.result


def worker(args: argparse.Namespace) -> None:
    django_setup(args.db)
    from django.conf import settings
    from django.contrib.auth.models import User

    import allocation.snapshot as snapshot_module
    from allocation.services import whatif_answer, whatif_input_normalize, whatif_warm
    from allocation.snapshot import snapshot_load
    from allocation.whatif.base import Context
    from inventory.models import KubeObject

    settings.CELERY_BROKER_URL = ""  # runs: this process only (the shard phase sets it again)
    out: dict[str, Any] = {"load_start": os.getloadavg()[0]}
    user, _ = User.objects.get_or_create(username="bench-whatif", defaults={"is_staff": True})
    started = time.perf_counter()
    snapshot = snapshot_load()
    out["snapshot_first_s"] = time.perf_counter() - started
    out["rss_after_load_mb"] = rss_mb()
    out["nodes"] = len(snapshot.nodes)
    out["devices"] = sum(len(s["spec"].get("devices") or []) for s in snapshot.slices)
    out["rows"] = {
        "resourceslices": len(snapshot.slices),
        "resourceclaims": len(snapshot.claims),
        "pods": len(snapshot.pods),
    }
    # What a worker does from its start on (allocation.worker.Warmer): the snapshot (just loaded) and
    # the view every question starts from. The first run below is a fresh worker's first, once warm.
    started = time.perf_counter()
    whatif_warm()
    out["warm_view_s"] = time.perf_counter() - started
    for kind, data in (("feasibility", FEASIBILITY), ("headroom", HEADROOM)):
        first, result = run_once(kind, data, user)
        warm = [run_once(kind, data, user)[0] for _ in range(3)]
        out[kind] = {
            "first_s": first,
            "warm_s": statistics.median(warm),
            "answer": result.get("nodes_feasible", result.get("total")),
            "computed": result.get("computed_nodes"),
            "result_kb": len(json.dumps(result)) / 1000,
        }
    # An unrelated claim changes: the run reads only that row again.
    claim = KubeObject.objects.filter(kind="resourceclaims").order_by("-id").first()
    assert claim is not None
    claim.raw = {**claim.raw, "metadata": {**claim.raw["metadata"], "labels": {"tick": "1"}}}
    claim.save()
    out["feasibility_after_change_s"] = run_once("feasibility", FEASIBILITY, user)[0]
    out["rss_mb"] = rss_mb()
    # Both taint impacts end to end in this process (no shards: no broker here), and the peak after each.
    for prefix, question in taint_questions(args, out["nodes"]):
        elapsed, result = run_once("taint_impact", question, user)
        out[prefix + "in process"] = {
            "s": elapsed,
            "evicted": result["summary"]["evicted"],
            "rss_mb": rss_mb(),
        }
    # The anchor after the peak is read: its copy of every slice is no part of a worker's memory.
    started = time.perf_counter()
    json.loads(json.dumps(snapshot.slices))
    out["json_slices_s"] = time.perf_counter() - started
    if args.redis:
        out["shards"] = shards(args, whatif_answer, whatif_input_normalize, Context, snapshot_module)
    out["load_end"] = os.getloadavg()[0]
    print("RESULT " + json.dumps(out), flush=True)


def shards(
    args: argparse.Namespace, answer: Any, normalize: Any, context: Any, snapshot_module: Any
) -> dict[str, Any]:
    from django.conf import settings

    queue = f"bench-shards-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": args.db,
        "REDIS_URL": args.redis,
        "DRADASH_CELERY_BROKER_URL": args.redis,
    }
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "dradash",
                "worker",
                "--pool=solo",
                "--loglevel=WARNING",
                "--without-mingle",
                "--without-gossip",
                "-n",
                f"{queue}-{i}@%h",
                "-Q",
                queue,
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for i in range(args.workers)
    ]
    try:
        time.sleep(8)  # the workers start (Django setup, Celery)
        out: dict[str, Any] = {"workers": args.workers, "cores": os.cpu_count()}
        questions = [("", "headroom", HEADROOM, 4)]
        if len(snapshot_module.snapshot_load().nodes) <= args.distinct_max_nodes:
            questions.append(("distinct ", "headroom", DISTINCT, 2))
        nodes_count = len(snapshot_module.snapshot_load().nodes)
        questions += [(prefix, "taint_impact", q, 2) for prefix, q in taint_questions(args, nodes_count)]
        modes = (("one process", 1), (f"{args.workers + 1} shards", args.workers + 1))
        answers: dict[str, Any] = {}
        for (prefix, kind, question, reps), (label, count) in ((q, m) for q in questions for m in modes):
            data = normalize(kind=kind, input=question)
            settings.CELERY_BROKER_URL = args.redis
            settings.DRADASH_WHATIF_SHARDS = count
            settings.DRADASH_WHATIF_SHARD_QUEUE = queue
            settings.DRADASH_WHATIF_SHARD_MIN_NODES = 1
            times = []
            result: dict[str, Any] = {}
            for _ in range(reps):
                ctx = context(snapshot=snapshot_module.snapshot_load(), now=NOW)
                started = time.perf_counter()
                result = answer(kind=kind, input=data, context=ctx)
                times.append(time.perf_counter() - started)
            if kind == "taint_impact":  # the sharded answer must be the unsharded one, to the byte
                assert answers.setdefault(prefix, result) == result, "sharded taint impact differs"
            out[prefix + label] = {
                "first_s": times[0],
                "warm_s": statistics.median(times[1:]),
                "total": result["total"] if kind == "headroom" else result["summary"]["evicted"],
                "shards": result.get("shards", 1),
                "computed": result.get("computed_nodes"),
            }
        for prefix, question in taint_questions(args, nodes_count):
            out[prefix + "scans"] = taint_scans(args, normalize(kind="taint_impact", input=question))
        return out
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def taint_scans(args: argparse.Namespace, data: dict[str, Any]) -> dict[str, Any]:
    """The taint impact's node scans one after another in this process, no other worker running: of all
    nodes (the unsharded run), of no node (what every scan pays first) and of each shard. The longest
    shard bounds a sharded run however many idle cores there are: all ÷ longest is the ceiling."""
    from allocation.snapshot import snapshot_load
    from allocation.whatif.kinds.taint_impact import taint_impact_scan
    from allocation.whatif.shards import split
    from allocation.whatif.view import node_names

    snapshot = snapshot_load()

    def timed(nodes: list[str]) -> float:
        started = time.perf_counter()
        taint_impact_scan(
            snapshot=snapshot, selectors=data["selectors"], taint=data["taint"], now=NOW, nodes=nodes
        )
        return time.perf_counter() - started

    nodes = node_names(snapshot)
    timed(nodes)  # warm: compiled CEL and the like, as a second run has them
    return {
        "all_s": timed(nodes),
        "none_s": timed([]),
        "shards_s": [timed(part) for part in split(nodes, args.workers + 1)],
    }


# ------------------------------------------------------------------------------------------ parent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, action="append")
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--redis", default="")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--taint-nodes", type=int, default=2, help="nodes whose GPUs the taint impact taints")
    parser.add_argument(
        "--distinct-max-nodes", type=int, default=3000, help="sizes for the all-distinct headroom"
    )
    parser.add_argument(
        "--keep-dbs", default="", help="keep each size's database in this directory and reuse it"
    )
    parser.add_argument(
        "--database-url",
        default="",
        help="e.g. postgres://…/bench_whatif (rebuilt per size); default: SQLite in /tmp",
    )
    parser.add_argument("--no-append", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--build", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        print("RESULT " + json.dumps(build(args.size, args.rules, args.db)), flush=True)
        return
    if args.worker:
        worker(args)
        return
    results = []
    for nodes in args.nodes or [1000]:
        tmp = Path(tempfile.mkdtemp(prefix="bench-whatif-"))
        db = args.database_url or f"sqlite:///{tmp / 'bench.sqlite3'}"
        phases = ["--build", "--worker"]
        if args.keep_dbs and not args.database_url:
            kept = Path(args.keep_dbs) / f"whatif-{nodes}-{args.rules}.sqlite3"
            db = f"sqlite:///{kept}"
            if kept.exists():
                phases = ["--worker"]
        try:
            report: dict[str, Any] = {"size": nodes}
            for phase in phases:
                cmd = [
                    sys.executable,
                    __file__,
                    phase,
                    "--db",
                    db,
                    "--size",
                    str(nodes),
                    "--rules",
                    str(args.rules),
                ]
                if args.redis:
                    cmd += ["--redis", args.redis, "--workers", str(args.workers)]
                    cmd += ["--distinct-max-nodes", str(args.distinct_max_nodes)]
                    cmd += ["--taint-nodes", str(args.taint_nodes)]
                proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
                lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
                if not lines:
                    raise SystemExit(f"{phase} failed at {nodes} nodes:\n{proc.stderr[-3000:]}")
                report.update(json.loads(lines[-1].removeprefix("RESULT ")))
            print(json.dumps(report), flush=True)
            results.append(report)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    lines = table(results, args)
    print("\n".join(lines))
    if not args.no_append:
        with RESULTS.open("a") as fh:
            fh.write("\n".join(lines) + "\n")


def table(results: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"\n## {stamp} — bench_whatif_scale.py (what-if at scale, issue 12 §5)\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs shared with other sessions, Python "
        f"{platform.python_version()}, {'PostgreSQL' if args.database_url.startswith('postgres') else 'SQLite'}. simcluster `scale:<nodes>` with {args.rules} one-pool DeviceTaintRules "
        "(effect None) and 4 allocated claims (+ pods) per node, written into the mirror's rows. End to end = "
        "`whatif_run_execute` in a worker process (run row, snapshot, answer, result written); first run, then "
        "median of 3. Anchors from the same worker process.\n",
        "| measurement (anchor) | "
        + " | ".join(f"{r['devices']:,} devices ({r['nodes']:,} nodes)" for r in results)
        + " |",
        "|---|" + "---|" * len(results),
    ]

    def add(label: str, fmt: Any) -> None:
        lines.append(f"| {label} | " + " | ".join(fmt(r) for r in results) + " |")

    add(
        "what-if snapshot rows (slices + claims + pods)",
        lambda r: (
            f"{r['rows']['resourceslices']:,} + {r['rows']['resourceclaims']:,} + {r['rows']['pods']:,}"
        ),
    )
    add("load average start → end", lambda r: f"{r['load_start']:.1f} → {r['load_end']:.1f}")
    add("JSON round trip of the slices (anchor J)", lambda r: f"{r['json_slices_s']:.2f} s")
    add("first snapshot load (anchor L)", lambda r: f"{r['snapshot_first_s']:.2f} s")
    add(
        "the worker's warm-up after the load: the base view (`whatif_warm`) · load + warm-up",
        lambda r: f"{r['warm_view_s']:.2f} s · {r['snapshot_first_s'] + r['warm_view_s']:.2f} s",
    )
    for kind, target in (("feasibility", 1.0), ("headroom", 2.0)):
        add(
            f"{kind} end to end, first run (a fresh worker, warmed up) · ÷ L",
            lambda r, k=kind: f"{r[k]['first_s']:.2f} s · {r[k]['first_s'] / r['snapshot_first_s']:.2f}×",
        )
        add(
            f"{kind} end to end, warm (< {target:g} s at 100k) · ÷ J",
            lambda r, k=kind: f"{r[k]['warm_s']:.2f} s · {r[k]['warm_s'] / r['json_slices_s']:.2f}×",
        )
        add(
            f"{kind}: {'nodes that fit' if kind == 'feasibility' else 'copies'} · nodes computed · result size",
            lambda r, k=kind: (
                f"{r[k]['answer']:,} · {r[k]['computed'] if r[k]['computed'] is not None else '—'} · {r[k]['result_kb']:.0f} kB"
            ),
        )
    add("feasibility after an unrelated claim changed", lambda r: f"{r['feasibility_after_change_s']:.2f} s")
    add(
        "worker peak RSS, VmHWM: after the first load · after the runs (< 1 GB at 100k)",
        lambda r: f"{r['rss_after_load_mb']:.0f} MB · {r['rss_mb']:.0f} MB",
    )
    for prefix, label in (
        ("taint ", f"NoExecute on {args.taint_nodes} nodes' GPUs"),
        ("taint, free half too, ", f"NoExecute on {args.taint_nodes} nodes' GPUs and the free half's"),
    ):
        add(
            f"taint impact end to end, {label}, one process, first run · pods evicted · worker VmHWM after it (< 1 GB)",
            lambda r, p=prefix: (
                f"{r[p + 'in process']['s']:.2f} s · {r[p + 'in process']['evicted']:,} · "
                f"{r[p + 'in process']['rss_mb']:.0f} MB"
            ),
        )
    if args.redis:
        for label in ("one process", f"{args.workers + 1} shards"):
            add(
                f"headroom answer, {label}{' (the run + ' + str(args.workers) + ' Celery workers)' if 'shards' in label else ''}: first · warm",
                lambda r, lb=label: (
                    f"{r['shards'][lb]['first_s']:.2f} s · {r['shards'][lb]['warm_s']:.2f} s ({r['shards'][lb]['total']:,} copies)"
                ),
            )
        add(
            "sharding speed-up, warm (one process ÷ shards)",
            lambda r: (
                f"{r['shards']['one process']['warm_s'] / r['shards'][f'{args.workers + 1} shards']['warm_s']:.2f}×"
            ),
        )
        sharded = f"{args.workers + 1} shards"

        def distinct(r: dict[str, Any]) -> str:
            one, many = r["shards"].get("distinct one process"), r["shards"].get("distinct " + sharded)
            if one is None or many is None:
                return "not run"
            return (
                f"{one['warm_s']:.2f} s → {many['warm_s']:.2f} s ({one['computed']:,} nodes computed, "
                f"{one['total']:,} copies) · {one['warm_s'] / many['warm_s']:.2f}×"
            )

        add(
            f"headroom, no two nodes alike (selector reads uuid): one process → {sharded}, 2nd run · speed-up",
            distinct,
        )

        for prefix, label in (
            ("taint ", f"NoExecute on {args.taint_nodes} nodes' GPUs"),
            ("taint, free half too, ", f"NoExecute on {args.taint_nodes} nodes' GPUs and the free half's"),
        ):

            def taint(r: dict[str, Any], p: str = prefix) -> str:
                one, many = r["shards"][p + "one process"], r["shards"][p + sharded]
                return (
                    f"{one['warm_s']:.2f} s → {many['warm_s']:.2f} s (first {one['first_s']:.2f} → "
                    f"{many['first_s']:.2f} s; {one['total']:,} pods evicted) · {one['warm_s'] / many['warm_s']:.2f}×"
                )

            def scans(r: dict[str, Any], p: str = prefix) -> str:
                t = r["shards"][p + "scans"]
                return (
                    f"{t['all_s']:.2f} s · {t['none_s']:.2f} s · "
                    + " + ".join(f"{x:.2f}" for x in t["shards_s"])
                    + f" s · {t['all_s'] / max(t['shards_s']):.2f}×"
                )

            add(
                f"taint impact, {label}: one process → {sharded}, 2nd run (same answer, checked) · speed-up",
                taint,
            )
            add(
                f"the same: its node scans one after another in one process: all nodes · no node · each of "
                f"the {args.workers + 1} shards · ceiling (all ÷ longest shard)",
                scans,
            )
    return lines


if __name__ == "__main__":
    main()
