"""The growth table (issue 12): the same measurements at 10k / 30k / 100k devices, each next to an anchor
measured in the same run, so a figure that grows faster than the cluster shows.

Cluster: simcluster `scale:<nodes>` (`large`'s mix: 8 GPUs + 2 NICs a node, two pools a node) with
`--rules` one-pool DeviceTaintRules (effect None) and `--claims` claims, each allocated one device and
reserved for its own pod (created in the store; controllers off, so nothing moves while we measure).

Per database, in a worker process (Django binds its database at setup):

- initial sync (`Mirror.sync_once`, every kind, derived rows) ÷ `kubectl get resourceslices,resourceclaims,
  pods -A -o json` (anchor), and ÷ the physical floor: `json.loads` of the same pages + `executemany` of the
  same rows (uid, name, namespace, resourceVersion, JSON) into a scratch table, in the same process;
  peak RSS after the sync;
- one watch batch of 300 and of 301 changed claims (the old cliff was at 301), and 2,000 pod updates;
- a new one-pool rule with `--rules` rules in place: apply → its devices carry the taint; 200 one-pool
  rules in one batch (a drain of 200 nodes); a rule over every GPU; each ÷ kubectl's list of the slices;
- reads through the whole Django stack (test client, session auth), p95 of `--requests`, ÷ the p95 of
  `/api/devices/?limit=1`: Overview, /api/classes/, /api/nodes/?limit=50, the attribute filter, search,
  the JSON export (one full download);
- the what-if snapshot: first load, then a reload after an unrelated claim changed.

    .venv/bin/python bench/bench_scale.py --nodes 1000 [--nodes 3000 ...] [--database-url URL ...]
        [--claims-per-node 4] [--rules 1000] [--no-append]

`--reads-only` measures the reads (and the anchor) again on databases a full run left behind (`migrate`
first, so new migrations' backfills run): no cluster, no sync, minutes instead of the sync's hour at 100k.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
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
sys.path.insert(0, str(ROOT / "bench"))
DEFAULT_DB = "sqlite:////tmp/dradash-bench-scale.sqlite3"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.95 + 0.5) - 1)]


def rss_mb() -> float:
    """This process's peak RSS: VmHWM, the high-water mark of its own address space. Not ru_maxrss: Linux
    carries that across fork and exec, so a worker started by the parent holding the simcluster (~1 GB
    at 100k devices) reported the parent's peak as its own."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------------------------------ worker


def worker(args: argparse.Namespace) -> None:
    from bench_mirror import fresh_database

    if not args.reads_only:
        fresh_database(args.database_url)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
    import django

    django.setup()
    from django.core.management import call_command

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    from inventory.models import Device

    if args.reads_only:
        report = {"migrate_s": time.perf_counter() - started, "devices": Device.objects.count()}
        report.update(reads(args.requests))
        print("RESULT " + json.dumps(report), flush=True)
        return
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror

    report = {}
    client = connect(args.kubeconfig)
    mirror = Mirror(client)
    rss_before = rss_mb()
    started = time.perf_counter()
    mirror.sync_once()
    report["sync_s"] = time.perf_counter() - started
    report["rss_mb"] = rss_mb()
    report["rss_before_mb"] = rss_before
    report["devices"] = Device.objects.count()
    report["floor_s"] = physical_floor(args.dump)
    report.update(batches(mirror))
    report.update(rules(mirror, args))
    report.update(reads(args.requests))
    report.update(snapshot(mirror))
    print("RESULT " + json.dumps(report), flush=True)


def physical_floor(dump: str, *, collector: bool = False) -> float:
    """json.loads of the pages kubectl received + executemany of the same rows into a scratch table.

    With the cyclic garbage collector paused, as the mirror's list runs (`writer.bulk_gc`): with it on,
    json.loads of 100,000 devices pays collections that walk the growing heap again and again, which made
    this anchor grow faster than the rows (and flattered the ratio at 100k). `collector=True` measures it
    with the collector on, for comparison."""
    import gc

    raw = Path(dump).read_bytes()
    gc.collect()
    paused = gc.isenabled() and not collector
    if paused:
        gc.disable()
    try:
        return _floor(raw)
    finally:
        if paused:
            gc.enable()


def _floor(raw: bytes) -> float:
    from django.db import connection, transaction

    started = time.perf_counter()
    items = json.loads(raw)["items"]
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    rows = [
        (
            o["metadata"]["uid"],
            o["metadata"]["name"],
            o["metadata"].get("namespace", ""),
            o["metadata"]["resourceVersion"],
            dumps(o),
        )
        for o in items
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE bench_floor (uid varchar(64) PRIMARY KEY, name text, ns text, rv text, raw text)"
        )
        cursor.executemany("INSERT INTO bench_floor VALUES (%s, %s, %s, %s, %s)", rows)
    elapsed = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE bench_floor")
    return elapsed


def _bumped(raw: dict[str, Any], tick: str, rv: int) -> dict[str, Any]:
    meta = {**raw["metadata"], "resourceVersion": str(rv)}
    meta["labels"] = {**(meta.get("labels") or {}), "tick": tick}
    return {**raw, "metadata": meta}


def batches(mirror: Any) -> dict[str, Any]:
    from inventory.mirror.writer import Event
    from inventory.models import KubeObject

    claims = list(
        KubeObject.objects.filter(kind="resourceclaims").order_by("id").values_list("raw", flat=True)[:2000]
    )
    pods = list(KubeObject.objects.filter(kind="pods").order_by("id").values_list("raw", flat=True)[:2000])
    out: dict[str, Any] = {}
    rv = 10**9
    for n in (300, 301):
        # Distinct claims in many pools; the status changes nothing but the watch delivers them.
        events = []
        for i, raw in enumerate(claims[:n]):
            rv += 1
            events.append(Event("resourceclaims", "MODIFIED", _bumped(raw, f"b{n}-{i}", rv), str(rv)))
        started = time.perf_counter()
        mirror.writer.apply(events, defer=True)  # as the write loop does: the batch, then deferred work
        out[f"claims_{n}_s"] = time.perf_counter() - started
        while mirror.writer.refresh_deferred():
            pass
        out[f"claims_{n}_all_s"] = time.perf_counter() - started
    events = []
    for i, raw in enumerate(pods):
        rv += 1
        events.append(Event("pods", "MODIFIED", _bumped(raw, f"p{i}", rv), str(rv)))
    started = time.perf_counter()
    for chunk in range(0, len(events), 500):  # the writer's batch size in the steady state
        mirror.writer.apply(events[chunk : chunk + 500], defer=True)
    out["pod_events"] = len(events)
    out["pod_events_s"] = time.perf_counter() - started
    return out


def rules(mirror: Any, args: argparse.Namespace) -> dict[str, Any]:
    from inventory.mirror.writer import Event
    from inventory.models import Device, KubeObject
    from simcluster.topology import scale_rule

    out: dict[str, Any] = {"rules_in_place": KubeObject.objects.filter(kind="devicetaintrules").count()}
    pool = Device.objects.filter(driver="gpu.example.com").order_by("-pool").values_list("pool", flat=True)[0]
    rule = scale_rule(99_999, pool, effect="NoSchedule")
    rule["metadata"].update(uid="bench-new-rule", resourceVersion="2000000001")
    started = time.perf_counter()
    mirror.writer.apply([Event("devicetaintrules", "ADDED", rule, "2000000001")])
    out["rule_one_pool_s"] = time.perf_counter() - started
    out["rule_one_pool_devices"] = Device.objects.filter(pool=pool, taint_no_schedule=True).count()
    # 200 one-pool rules in one watch batch (a drain of 200 nodes): until every device they select has it.
    pools = list(
        Device.objects.filter(driver="gpu.example.com")
        .order_by("pool")
        .values_list("pool", flat=True)
        .distinct()[:200]
    )
    batch = []
    for i, name in enumerate(pools):
        many = scale_rule(100_000 + i, name, effect="NoExecute")
        many["metadata"].update(uid=f"bench-many-{i}", resourceVersion=str(2_000_000_100 + i))
        batch.append(Event("devicetaintrules", "ADDED", many, str(2_000_000_100 + i)))
    started = time.perf_counter()
    mirror.writer.apply(batch, defer=True)
    while mirror.writer._taint_selectors and mirror.writer.refresh_deferred():
        pass
    out["rules_200_s"] = time.perf_counter() - started
    out["rules_200_devices"] = Device.objects.filter(
        pool__in=pools, driver="gpu.example.com", taint_no_execute=True
    ).count()
    out["rules_200_pools"] = len(pools)
    every = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "bench-every-gpu", "uid": "bench-every-gpu", "resourceVersion": "2000000002"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com"},
            "taint": {"key": "example.com/every", "effect": "None"},
        },
    }
    started = time.perf_counter()
    mirror.writer.apply([Event("devicetaintrules", "ADDED", every, "2000000002")], defer=True)
    out["rule_every_gpu_first_batch_s"] = time.perf_counter() - started
    while mirror.writer._taint_selectors and mirror.writer.refresh_deferred():
        pass
    out["rule_every_gpu_s"] = time.perf_counter() - started  # every GPU row shows the taint
    while mirror.writer.refresh_deferred():
        pass
    out["rule_every_gpu_availability_s"] = time.perf_counter() - started
    out["rule_every_gpu_devices"] = Device.objects.filter(taints__icontains="example.com/every").count()
    return out


READS = [
    ("devices ?limit=1 (anchor)", "/api/devices/", {"limit": "1"}),
    ("Overview", "/", {}),
    ("/api/classes/", "/api/classes/", {}),
    ("/api/nodes/?limit=50", "/api/nodes/", {"limit": "50"}),
    ("attribute model=H100", "/api/devices/", {"attribute": "model=H100", "limit": "50"}),
    ("search q=gpu-3", "/api/devices/", {"q": "gpu-3", "limit": "50"}),
]


def reads(requests: int) -> dict[str, Any]:
    from django.contrib.auth.models import User
    from django.test import Client
    from django.test.utils import setup_test_environment

    setup_test_environment()
    user, _ = User.objects.get_or_create(username="bench-viewer")
    client = Client()
    client.force_login(user)
    out: dict[str, Any] = {"reads": {}}
    for label, url, params in READS:
        times = []
        for _ in range(2):  # warm: the first request compiles templates and fills caches
            client.get(url, params)
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(url, params)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, (url, response.status_code, response.content[:300])
        out["reads"][label] = {"p50": statistics.median(times), "p95": p95(times)}
        if url == "/api/nodes/":
            body = response.json()
            out["nodes_count"] = body["count"]
    started = time.perf_counter()
    response = client.get("/devices/export.json")
    first = None
    size = 0
    for chunk in response.streaming_content:
        if first is None:
            first = time.perf_counter() - started
        size += len(chunk)
    out["export_json_s"] = time.perf_counter() - started
    out["export_json_first_byte_ms"] = (first or 0) * 1000
    out["export_json_mb"] = size / 1e6
    return out


def snapshot(mirror: Any) -> dict[str, Any]:
    from allocation.snapshot import snapshot_load
    from inventory.mirror.writer import Event
    from inventory.models import KubeObject

    out: dict[str, Any] = {}
    started = time.perf_counter()
    first = snapshot_load()
    out["snapshot_first_s"] = time.perf_counter() - started
    raw = KubeObject.objects.filter(kind="resourceclaims").order_by("-id").values_list("raw", flat=True)[0]
    changed = _bumped(raw, "snapshot", 2000000100)
    mirror.writer.apply([Event("resourceclaims", "MODIFIED", changed, "2000000100")])
    started = time.perf_counter()
    second = snapshot_load()
    out["snapshot_after_change_s"] = time.perf_counter() - started
    found = second.find("ResourceClaim", changed["metadata"]["namespace"], changed["metadata"]["name"])
    assert found is not None and found["metadata"]["labels"]["tick"] == "snapshot", "stale snapshot"
    out["snapshot_slices"] = len(first.slices)
    return out


# ------------------------------------------------------------------------------------------ parent


def time_kubectl(kubeconfig: str, kinds: str, dump: str | None = None) -> float:
    return kubectl_timed(kubeconfig, kinds, dump)[0]


def kubectl_timed(kubeconfig: str, kinds: str, dump: str | None = None) -> tuple[float, float]:
    """`kubectl get <kinds> -A -o json`: its wall time, and how much of it kubectl spent waiting on its own
    client-side rate limit (client-go's 5 requests/s after a burst of 10, which `-v=6` logs as "Waited
    before sending request"): past ~10 pages of 500 a list waits more than it works (30,000 devices with
    their claims and pods: 3.8 s of 10 s)."""
    from tests.kubectl import kubectl_binary

    started = time.perf_counter()
    done = subprocess.run(
        [str(kubectl_binary()), "--kubeconfig", kubeconfig, "get", kinds, "-A", "-o", "json", "-v=6"],
        check=True,
        capture_output=True,
    )
    elapsed = time.perf_counter() - started
    if dump:
        Path(dump).write_bytes(done.stdout)
    waits = re.findall(rb'Waited before sending request" delay="([0-9.]+)ms"', done.stderr)
    return elapsed, sum(float(ms) for ms in waits) / 1000


def run_reads_only(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    for url in args.database_urls or [DEFAULT_DB]:
        load_start = os.getloadavg()[0]
        proc = subprocess.run(
            [sys.executable, __file__, "--worker", "--reads-only", "--database-url", url,
             "--requests", str(args.requests)],
            capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
        lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
        if not lines:
            raise SystemExit(f"worker failed for {url}:\n{proc.stderr[-3000:]}")
        report = json.loads(lines[-1].removeprefix("RESULT "))
        report.update(
            database="PostgreSQL" if url.startswith("postgres") else "SQLite",
            load_start=load_start,
            load_end=os.getloadavg()[0],
        )
        print(json.dumps(report), flush=True)
        results.append(report)
    return results


def reads_table(results: list[dict[str, Any]]) -> list[str]:
    head = "| read (p95 of the requests) | " + " | ".join(
        f"{r['devices']:,} devices · {r['database']}" for r in results
    )
    rows = [head + " |", "|---|" + "---|" * len(results)]

    def add(label: str, fmt: Any) -> None:
        rows.append(f"| {label} | " + " | ".join(fmt(r) for r in results) + " |")

    add("load average start → end", lambda r: f"{r['load_start']:.1f} → {r['load_end']:.1f}")
    add("migrate (backfills of new migrations)", lambda r: f"{r['migrate_s']:.2f} s")
    anchor = "devices ?limit=1 (anchor)"
    for label, _url, _params in READS:
        if label == anchor:
            add(
                f"p95 (p50) {label}",
                lambda r: f"{r['reads'][anchor]['p95']:.1f} ({r['reads'][anchor]['p50']:.1f}) ms",
            )
            continue
        add(
            f"p95 (p50) {label} (< 100 ms) · p95 ÷ anchor's (≤ 5) · p50 ÷ anchor's",
            lambda r, label=label: (
                f"{r['reads'][label]['p95']:.1f} ({r['reads'][label]['p50']:.1f}) ms · "
                f"{r['reads'][label]['p95'] / r['reads'][anchor]['p95']:.1f}× · "
                f"{r['reads'][label]['p50'] / r['reads'][anchor]['p50']:.1f}×"
            ),
        )
    add("/api/nodes/ count (= nodes)", lambda r: f"{r['nodes_count']:,}")
    add(
        "export.json: first byte · whole",
        lambda r: (
            f"{r['export_json_first_byte_ms']:.0f} ms · {r['export_json_s']:.2f} s ({r['export_json_mb']:.0f} MB)"
        ),
    )
    return rows


def run_size(nodes: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    from bench_mirror import populate

    from simcluster.app import start_simcluster

    tmp = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    kubeconfig = str(tmp / "kubeconfig")
    dump = str(tmp / "list.json")
    print(f"starting simcluster scale:{nodes}:rules={args.rules} …", flush=True)
    load_start = os.getloadavg()[0]
    cluster = start_simcluster(
        topology=f"scale:{nodes}:rules={args.rules}", kubeconfig_path=Path(kubeconfig), controllers=False
    )
    results = []
    try:
        populate(cluster.store, nodes * args.claims_per_node)
        kubectl_all = time_kubectl(kubeconfig, "resourceslices,resourceclaims,pods", dump)
        kubectl_slices = time_kubectl(kubeconfig, "resourceslices")
        print(f"kubectl: all {kubectl_all:.2f}s, slices {kubectl_slices:.2f}s", flush=True)
        for url in args.database_urls or [DEFAULT_DB]:
            proc = subprocess.run(
                [sys.executable, __file__, "--worker", "--kubeconfig", kubeconfig, "--dump", dump,
                 "--database-url", url, "--requests", str(args.requests)],
                capture_output=True, text=True, cwd=ROOT,
            )  # fmt: skip
            lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
            if not lines:
                raise SystemExit(f"worker failed for {url}:\n{proc.stderr[-3000:]}")
            report = json.loads(lines[-1].removeprefix("RESULT "))
            report.update(
                nodes=nodes,
                database="PostgreSQL" if url.startswith("postgres") else "SQLite",
                kubectl_all_s=kubectl_all,
                kubectl_slices_s=kubectl_slices,
                claims=nodes * args.claims_per_node,
                load_start=load_start,
                load_end=os.getloadavg()[0],
            )
            print(json.dumps(report), flush=True)
            results.append(report)
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def table(results: list[dict[str, Any]]) -> list[str]:
    def cell(r: dict[str, Any], key: str) -> str:
        return f"{r[key]:.2f} s"

    head = (
        "| measurement (anchor) | "
        + " | ".join(f"{r['devices']:,} devices · {r['database']}" for r in results)
        + " |"
    )
    rows = [head, "|---|" + "---|" * len(results)]

    def add(label: str, fmt: Any) -> None:
        rows.append(f"| {label} | " + " | ".join(fmt(r) for r in results) + " |")

    add("claims + pods mirrored", lambda r: f"{r['claims']:,} + {r['claims']:,}")
    add("load average start → end", lambda r: f"{r['load_start']:.1f} → {r['load_end']:.1f}")
    add("kubectl get slices,claims,pods -o json (anchor A)", lambda r: cell(r, "kubectl_all_s"))
    add("physical floor: json.loads + executemany, collector paused (anchor F)", lambda r: cell(r, "floor_s"))
    add(
        "initial sync · ÷ A (≤ 1.5) · ÷ F (≤ 2.5)",
        lambda r: (
            f"{r['sync_s']:.2f} s · {r['sync_s'] / r['kubectl_all_s']:.2f}× · {r['sync_s'] / r['floor_s']:.2f}×"
        ),
    )
    add("mirror peak RSS after sync (≤ 600 MB at 100k)", lambda r: f"{r['rss_mb']:.0f} MB")
    add(
        "batch of 300 / 301 changed claims (+ deferred availability)",
        lambda r: (
            f"{r['claims_300_s'] * 1000:.0f} / {r['claims_301_s'] * 1000:.0f} ms "
            f"(+ {r['claims_300_all_s'] - r['claims_300_s']:.2f} / {r['claims_301_all_s'] - r['claims_301_s']:.2f} s)"
        ),
    )
    add(
        "pod updates applied (≥ 2,000/s)",
        lambda r: f"{r['pod_events'] / r['pod_events_s']:,.0f}/s ({r['pod_events']:,})",
    )
    add("kubectl get resourceslices -o json (anchor S)", lambda r: cell(r, "kubectl_slices_s"))
    add(
        "new one-pool rule, rules in place → on its devices (< 1 s) · ÷ S",
        lambda r: (
            f"{r['rule_one_pool_s'] * 1000:.0f} ms ({r['rules_in_place']} rules, "
            f"{r['rule_one_pool_devices']} devices) · {r['rule_one_pool_s'] / r['kubectl_slices_s']:.2f}×"
        ),
    )
    add(
        "200 one-pool rules in one batch → on all their devices · ÷ S",
        lambda r: (
            (
                f"{r['rules_200_s']:.2f} s ({r['rules_200_pools']} pools, {r['rules_200_devices']:,} devices) · "
                f"{r['rules_200_s'] / r['kubectl_slices_s']:.2f}×"
            )
            if "rules_200_s" in r
            else "not measured"
        ),
    )
    add(
        "rule over every GPU → on all of them · ÷ S",
        lambda r: (
            f"{r['rule_every_gpu_s']:.2f} s ({r['rule_every_gpu_devices']:,}) · "
            f"{r['rule_every_gpu_s'] / r['kubectl_slices_s']:.2f}× (their pools' availability "
            f"after {r['rule_every_gpu_availability_s']:.1f} s)"
        ),
    )
    anchor = "devices ?limit=1 (anchor)"
    for label, _url, _params in READS:
        if label == anchor:
            add(f"p95 {label}", lambda r: f"{r['reads'][anchor]['p95']:.1f} ms")
            continue
        add(
            f"p95 {label} (< 100 ms) · ÷ anchor (≤ 5)",
            lambda r, label=label: (
                f"{r['reads'][label]['p95']:.1f} ms · "
                f"{r['reads'][label]['p95'] / r['reads'][anchor]['p95']:.1f}×"
            ),
        )
    add("/api/nodes/ count (= nodes)", lambda r: f"{r['nodes_count']:,}")
    add(
        "export.json: first byte · whole",
        lambda r: (
            f"{r['export_json_first_byte_ms']:.0f} ms · {r['export_json_s']:.2f} s ({r['export_json_mb']:.0f} MB)"
        ),
    )
    add(
        "what-if snapshot: first load · after an unrelated claim changed",
        lambda r: f"{r['snapshot_first_s']:.2f} s · {r['snapshot_after_change_s'] * 1000:.0f} ms",
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, action="append", help="default: 1000")
    parser.add_argument("--claims-per-node", type=int, default=4)
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--database-url", action="append", dest="database_urls")
    parser.add_argument("--no-append", action="store_true")
    parser.add_argument("--note", default="", help="a line appended under the table")
    parser.add_argument("--reads-only", action="store_true", help="reads again on databases left by a run")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        args.database_url = args.database_urls[0]
        worker(args)
        return
    results: list[dict[str, Any]] = []
    if args.reads_only:
        results = run_reads_only(args)
    else:
        for nodes in args.nodes or [1000]:
            results += run_size(nodes, args)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"\n## {stamp} — bench_scale.py (growth table, issue 12)\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared with other sessions), Python "
        f"{platform.python_version()}. simcluster `scale:<nodes>` (8 GPUs + 2 NICs a node), {args.rules} one-pool "
        f"DeviceTaintRules, {args.claims_per_node} allocated claims (+ pods) per node; reads: in-process test "
        f"client, p95 of {args.requests}. Each ratio is against an anchor measured in the same run.\n",
        *(reads_table(results) if args.reads_only else table(results)),
    ]
    if args.note:
        lines += ["", args.note]
    from bench_mirror import publish

    publish(lines, append=not args.no_append)


if __name__ == "__main__":
    main()
