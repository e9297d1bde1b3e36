"""The initial mirror sync alone (issue 12 §2), with the anchors of `bench_scale.py` measured in the same run:
`kubectl get resourceslices,resourceclaims,pods -A -o json` (A) and the physical floor (F: `json.loads` of
the same pages + `executemany` of the same rows into a scratch table, in the worker process after the sync).
Peak RSS is the worker's VmHWM (`bench_scale.rss_mb`), not ru_maxrss, which the worker inherits from the
parent holding the simcluster.

Cluster: simcluster `scale:<nodes>` with `--rules` one-pool DeviceTaintRules and `--claims-per-node` allocated
claims (+ pods), as bench_scale.py. Per database, a fresh worker process: `Mirror.sync_once()` timed until
every kind is current (the VACUUM it ends with, which the threaded mirror runs once idle, is timed apart), peak RSS
(VmHWM) after it, and optionally a cProfile of the sync (`--profile N`: the top N by cumulative time),
tracemalloc's peak (`--tracemalloc`, slow) or the wall time of the sync's SQL by statement (`--sql-time N`:
the top N statements, literals and parameter lists folded, with calls and seconds).

    .venv/bin/python bench/bench_sync.py --nodes 1000 [--nodes 3000] [--database-url URL ...] [--repeat 2]
        [--profile 40] [--sql-time 25] [--no-append] [--note TEXT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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
DEFAULT_DB = "sqlite:////tmp/dradash-bench-sync.sqlite3"


def worker(args: argparse.Namespace) -> None:
    from bench_mirror import fresh_database
    from bench_scale import physical_floor, rss_mb

    fresh_database(args.database_url)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror
    from inventory.models import Device, KubeObject

    report: dict[str, Any] = {"rss_before_mb": rss_mb()}
    mirror = Mirror(connect(args.kubeconfig))
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    # The deferred work (each pool's availability: the allocator per pool, after every kind is listed),
    # timed apart: the threaded mirror says "synced" before it, `sync_once` returns after it.
    deferred = {"s": 0.0}
    refresh = mirror.writer.refresh_deferred

    def timed_refresh(**kwargs: Any) -> bool:
        began = time.perf_counter()
        try:
            return refresh(**kwargs)
        finally:
            deferred["s"] += time.perf_counter() - began

    mirror.writer.refresh_deferred = timed_refresh  # type: ignore[method-assign]
    # The VACUUM of what the lists filled, which `sync_once` runs once every kind is current (the threaded
    # mirror: once its writer is idle, after "synced"): timed apart and not part of the ratios.
    vacuum = {"s": 0.0}
    vacuum_listed = mirror.writer.vacuum_listed

    def timed_vacuum() -> list[str]:
        began = time.perf_counter()
        try:
            return vacuum_listed()
        finally:
            vacuum["s"] += time.perf_counter() - began

    mirror.writer.vacuum_listed = timed_vacuum  # type: ignore[method-assign]
    sql_time: dict[str, list[float]] = {}
    if args.sql_time:
        from django.db import connection

        connection.execute_wrappers.append(_timed_sql(sql_time))
    # The database's own share of the sync: the wall inside its statements and commits (the sqlite3 and
    # psycopg calls, whatever the indexes and triggers cost), which no Python change can take away.
    in_database = _database_meter()
    phases: dict[str, float] = {}
    if args.tracemalloc:  # where the peak is: the traced peak seen by the end of each kind's pages
        import tracemalloc

        write_page = mirror.writer.write_page

        def traced_page(kind: str, items: list[Any]) -> int:
            try:
                return write_page(kind, items)
            finally:
                phases[kind] = max(phases.get(kind, 0.0), tracemalloc.get_traced_memory()[1] / 1e6)
                tracemalloc.reset_peak()

        mirror.writer.write_page = traced_page  # type: ignore[method-assign]
        report["phases_peak_mb"] = phases
    # Per kind: the wall of its list, the writing thread's CPU, and the wall spent waiting for its next
    # page (what the read-ahead had not fetched yet); the rest of the wall is waiting on the database.
    kinds: dict[str, dict[str, float]] = {}
    list_into = mirror._list_into_database

    def timed_list(kind: str, pages: Any) -> Any:
        spent = kinds.setdefault(kind, {"wall_s": 0.0, "cpu_s": 0.0, "page_wait_s": 0.0})

        def waited() -> Any:
            while True:
                began = time.perf_counter()
                try:
                    page = next(pages)
                except StopIteration:
                    return
                finally:
                    spent["page_wait_s"] += time.perf_counter() - began
                yield page

        began, cpu = time.perf_counter(), time.thread_time()
        kind_profiler = None
        if kind == args.profile_kind:
            import cProfile

            kind_profiler = cProfile.Profile()
            kind_profiler.enable()
        try:
            return list_into(kind, waited())
        finally:
            spent["wall_s"] += time.perf_counter() - began
            spent["cpu_s"] += time.thread_time() - cpu
            if kind_profiler is not None:
                import io
                import pstats

                kind_profiler.disable()
                out = io.StringIO()
                pstats.Stats(kind_profiler, stream=out).sort_stats("cumulative").print_stats(40)
                sys.stderr.write(f"== the list of {kind} only\n" + out.getvalue())

    mirror._list_into_database = timed_list  # type: ignore[method-assign]
    report["kinds"] = kinds
    started, cpu = time.perf_counter(), time.process_time()
    mirror.sync_once()
    report["sync_s"] = time.perf_counter() - started - vacuum["s"]  # until every kind is current
    report["sync_cpu_s"] = time.process_time() - cpu  # this process's CPU: less at the mercy of the load
    report["database_s"] = in_database()
    report["deferred_s"] = deferred["s"]
    report["vacuum_s"] = vacuum["s"]
    if profiler is not None:
        import io
        import pstats

        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("cumulative").print_stats(args.profile)
        stats.sort_stats("tottime").print_stats(args.profile)
        sys.stderr.write(out.getvalue())
    if args.tracemalloc:
        import tracemalloc

        report["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        top = tracemalloc.take_snapshot().statistics("lineno")[:25]  # what the sync left allocated
        sys.stderr.write("\n".join(str(stat) for stat in top) + "\n")
        tracemalloc.stop()
    if args.sql_time:
        total = sum(t for _, t in sql_time.values())
        top = sorted(sql_time.items(), key=lambda kv: -kv[1][1])[: args.sql_time]
        sys.stderr.write(
            f"SQL: {total:.2f} s of wall in {sum(int(n) for n, _ in sql_time.values()):,} calls\n"
        )
        sys.stderr.write("".join(f"{t:8.2f} s {int(n):7,} × {sql}\n" for sql, (n, t) in top))
    report["rss_mb"] = rss_mb()
    report["devices"] = Device.objects.count()
    report["objects"] = KubeObject.objects.count()
    cpu = time.process_time()
    report["floor_s"] = physical_floor(args.dump)
    report["floor_cpu_s"] = time.process_time() - cpu
    report["floor_gc_s"] = physical_floor(args.dump, collector=True)
    report["derived_s"], report["derived_rows"] = derived_rows_floor()
    print("RESULT " + json.dumps(report), flush=True)


def _database_meter() -> Any:
    """Start summing the wall spent in the database connection's statements and commits; returns a
    function that stops it and gives the seconds."""
    from django.db import connection

    spent = [0.0]
    on = [True]

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        began = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            if on[0]:
                spent[0] += time.perf_counter() - began

    commit = connection._commit

    def timed_commit() -> Any:
        began = time.perf_counter()
        try:
            return commit()
        finally:
            if on[0]:
                spent[0] += time.perf_counter() - began

    connection.execute_wrappers.append(wrapper)
    connection._commit = timed_commit  # type: ignore[method-assign]

    def stop() -> float:
        on[0] = False
        return spent[0]

    return stop


#: the tables the sync fills besides the objects' rows (KubeObject, which anchor F writes)
DERIVED_TABLES = ("inventory_device", "inventory_deviceattribute", "inventory_pool", "inventory_claim",
                  "inventory_allocation", "inventory_classavailability", "inventory_pod")  # fmt: skip


def derived_rows_floor() -> tuple[float, int]:
    """The physical floor of the rows the sync derives (F* = F + this): `executemany` of the same rows the
    sync wrote into each derived table, into a scratch copy of that table without indexes, triggers or
    constraints (the rows read beforehand, not timed)."""
    from django.db import connection, transaction

    elapsed, count = 0.0, 0
    with connection.cursor() as cursor:
        for table in DERIVED_TABLES:
            cursor.execute(f"SELECT * FROM {table}")
            rows = cursor.fetchall()
            if not rows:
                continue
            cursor.execute(f"CREATE TABLE bench_floor_derived AS SELECT * FROM {table} WHERE 1 = 0")
            marks = ", ".join(["%s"] * len(rows[0]))
            started = time.perf_counter()
            with transaction.atomic():
                cursor.executemany(f"INSERT INTO bench_floor_derived VALUES ({marks})", rows)
            elapsed += time.perf_counter() - started
            count += len(rows)
            cursor.execute("DROP TABLE bench_floor_derived")
    return elapsed, count


def _timed_sql(totals: dict[str, list[float]]) -> Any:
    """A Django execute wrapper: wall seconds and calls by statement shape (numbers, strings and
    parameter lists folded, the first 160 characters)."""
    import re

    fold = [(re.compile(r"'(?:[^']|'')*'"), "'?'"), (re.compile(r"\b\d+\b"), "N"),
            (re.compile(r"\((?:\s*(?:%s|N|'\?'|NULL)\s*,?)+\)"), "(…)"), (re.compile(r"(?:\(…\),\s*)+"), "(…), ")]  # fmt: skip

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        began = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            shape = " ".join(sql.split())
            for pattern, replacement in fold:
                shape = pattern.sub(replacement, shape)
            entry = totals.setdefault(("many " if many else "") + shape[:160], [0.0, 0.0])
            entry[0] += 1
            entry[1] += time.perf_counter() - began

    return wrapper


def run_size(nodes: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    from bench_mirror import populate
    from bench_scale import kubectl_timed

    from simcluster.app import start_simcluster

    tmp = Path(tempfile.mkdtemp(prefix="bench-sync-"))
    kubeconfig = str(tmp / "kubeconfig")
    dump = str(tmp / "list.json")
    print(f"starting simcluster scale:{nodes}:rules={args.rules} …", flush=True)
    cluster = start_simcluster(
        topology=f"scale:{nodes}:rules={args.rules}", kubeconfig_path=Path(kubeconfig), controllers=False
    )
    results = []
    try:
        populate(cluster.store, nodes * args.claims_per_node)
        for url in args.database_urls or [DEFAULT_DB]:
            runs: list[dict[str, Any]] = []
            for _ in range(args.repeat):
                load_start = os.getloadavg()[0]
                kubectl_all, throttled = kubectl_timed(kubeconfig, "resourceslices,resourceclaims,pods", dump)
                proc = subprocess.run(
                    [sys.executable, __file__, "--worker", "--kubeconfig", kubeconfig, "--dump", dump,
                     "--database-url", url, "--profile", str(args.profile), "--sql-time", str(args.sql_time),
                     "--profile-kind", args.profile_kind]
                    + (["--tracemalloc"] if args.tracemalloc else []),
                    capture_output=True, text=True, cwd=ROOT,
                )  # fmt: skip
                if args.profile or args.profile_kind or args.tracemalloc or args.sql_time:
                    print(proc.stderr[-60000:], flush=True)
                lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
                if not lines:
                    raise SystemExit(f"worker failed for {url}:\n{proc.stderr[-3000:]}")
                report = json.loads(lines[-1].removeprefix("RESULT "))
                for kind, spent in report.get("kinds", {}).items():
                    print(
                        f"  {kind:24} wall {spent['wall_s']:6.2f} s · writer CPU {spent['cpu_s']:6.2f} s · "
                        f"waiting for pages {spent['page_wait_s']:6.2f} s",
                        flush=True,
                    )
                report.update(
                    kubectl_all_s=kubectl_all,
                    kubectl_throttled_s=throttled,
                    load_start=load_start,
                    load_end=os.getloadavg()[0],
                )
                print(json.dumps(report), flush=True)
                runs.append(report)
            best = min(runs, key=lambda r: r["sync_s"] / r["kubectl_all_s"])
            best.update(
                nodes=nodes,
                database="PostgreSQL" if url.startswith("postgres") else "SQLite",
                claims=nodes * args.claims_per_node,
                runs=len(runs),
                ratio_a=[r["sync_s"] / r["kubectl_all_s"] for r in runs],
                ratio_w=[r["sync_s"] / (r["kubectl_all_s"] - r["kubectl_throttled_s"]) for r in runs],
                ratio_f=[r["sync_s"] / r["floor_s"] for r in runs],
                ratio_fd=[r["sync_s"] / (r["floor_s"] + r.get("derived_s", 0.0)) for r in runs],
            )
            results.append(best)
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def table(results: list[dict[str, Any]]) -> list[str]:
    head = "| initial sync (anchor) | " + " | ".join(
        f"{r['devices']:,} devices · {r['database']}" for r in results
    )
    rows = [head + " |", "|---|" + "---|" * len(results)]

    def add(label: str, fmt: Any) -> None:
        rows.append(f"| {label} | " + " | ".join(fmt(r) for r in results) + " |")

    add("objects mirrored (claims + pods)", lambda r: f"{r['objects']:,} ({r['claims']:,} + {r['claims']:,})")
    add("load average start → end", lambda r: f"{r['load_start']:.1f} → {r['load_end']:.1f}")
    add("kubectl get slices,claims,pods -o json (anchor A) · of which its client-side throttling (T)", lambda r: (
        f"{r['kubectl_all_s']:.2f} s · {r['kubectl_throttled_s']:.2f} s"))  # fmt: skip
    add("physical floor: json.loads + executemany, collector paused as in the sync (anchor F) · with the "
        "collector on", lambda r: f"{r['floor_s']:.2f} s · "
        + (f"{r['floor_gc_s']:.2f} s" if "floor_gc_s" in r else "–"))  # fmt: skip
    add("floor of every row the sync writes (F*: F + executemany of its derived rows into scratch tables)",
        lambda r: f"{r['floor_s'] + r['derived_s']:.2f} s ({r['derived_rows']:,} derived rows)"
        if "derived_s" in r else "–")  # fmt: skip
    add("initial sync (`sync_once` until synced) · of which availability (deferred) · then VACUUM", lambda r: (
        f"{r['sync_s']:.2f} s · {r.get('deferred_s', 0):.2f} s · {r.get('vacuum_s', 0):.2f} s"))  # fmt: skip
    add("… of which inside the database's statements and commits (D; PostgreSQL: its COPY streams not "
        "included) · D ÷ F", lambda r: (
        f"{r['database_s']:.2f} s · {r['database_s'] / r['floor_s']:.2f}×" if "database_s" in r else "–"))  # fmt: skip
    add("÷ A (≤ 1.5): this run · median of runs", lambda r: (
        f"{r['sync_s'] / r['kubectl_all_s']:.2f}× · {statistics.median(r['ratio_a']):.2f}× ({r['runs']})"))  # fmt: skip
    add("÷ (A − T), kubectl without its throttling: this run · median of runs", lambda r: (
        f"{r['sync_s'] / (r['kubectl_all_s'] - r['kubectl_throttled_s']):.2f}× · "
        f"{statistics.median(r['ratio_w']):.2f}× ({r['runs']})"))  # fmt: skip
    add("÷ F (≤ 2.5): this run · median of runs", lambda r: (
        f"{r['sync_s'] / r['floor_s']:.2f}× · {statistics.median(r['ratio_f']):.2f}× ({r['runs']})"))  # fmt: skip
    add("÷ F*: this run · median of runs", lambda r: (
        f"{r['sync_s'] / (r['floor_s'] + r['derived_s']):.2f}× · {statistics.median(r['ratio_fd']):.2f}× ({r['runs']})"
        if "derived_s" in r else "–"))  # fmt: skip
    add("CPU seconds of the worker: sync ÷ floor", lambda r: (
        f"{r['sync_cpu_s']:.2f} s ÷ {r['floor_cpu_s']:.2f} s = {r['sync_cpu_s'] / r['floor_cpu_s']:.2f}×"
        if "sync_cpu_s" in r else "–"))  # fmt: skip
    add("mirror peak RSS (VmHWM) after the sync · before it", lambda r: (
        f"{r['rss_mb']:.0f} MB · {r['rss_before_mb']:.0f} MB"))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, action="append", help="default: 1000")
    parser.add_argument("--claims-per-node", type=int, default=4)
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument(
        "--repeat", type=int, default=1, help="workers per database (the table shows the best)"
    )
    parser.add_argument("--database-url", action="append", dest="database_urls")
    parser.add_argument("--profile", type=int, default=0, help="print cProfile's top N (slows the sync)")
    parser.add_argument(
        "--profile-kind",
        default="",
        help="cProfile only while this kind lists (top N: --profile, default 40)",
    )
    parser.add_argument("--tracemalloc", action="store_true", help="report tracemalloc's peak (slow)")
    parser.add_argument("--sql-time", type=int, default=0, help="print the top N SQL statements by wall time")
    parser.add_argument("--no-append", action="store_true")
    parser.add_argument("--note", default="", help="a line appended under the table")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        args.database_url = args.database_urls[0]
        worker(args)
        return
    results: list[dict[str, Any]] = []
    for nodes in args.nodes or [1000]:
        results += run_size(nodes, args)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"\n## {stamp} — bench_sync.py (initial sync, issue 12 §2)\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared with other sessions), Python "
        f"{platform.python_version()}. simcluster `scale:<nodes>`, {args.rules} one-pool DeviceTaintRules, "
        f"{args.claims_per_node} allocated claims (+ pods) per node. Best of {args.repeat} worker(s) by ÷ A; "
        "each ratio against anchors measured in the same run.\n",
        *table(results),
    ]
    if args.note:
        lines += ["", args.note]
    from bench_mirror import publish

    publish(lines, append=not args.no_append and not args.profile and not args.tracemalloc)


if __name__ == "__main__":
    main()
