"""Allocator throughput on a scheduler_perf-like workload.

500 nodes x 8 devices (one driver, one node-local pool per node), claims generated from one
template asking for one device each, allocated until the cluster is full. Each claim tries
the nodes in order until one fits (a scheduler taking the first feasible node); the
allocated state is kept incrementally. A second scenario asks for two devices per claim
with a ``matchAttribute`` constraint on ``resource.kubernetes.io/numaNode``.

Anchor (dra-api.md §7.9): kube-scheduler reaches about 250-270 pods/s on these DRA
scenarios on a 6-CPU machine, about 109 with matchAttribute. Target: at least that many
claims/s here.

    .venv/bin/python bench/bench_allocator.py [--nodes 500] [--devices 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dra.allocator import DEFAULT_FEATURES, AllocatedState, Allocator, prepare_claim  # noqa: E402

DRIVER = "test-driver.cdi.k8s.io"
ANCHORS = {"one device per claim": 250.0, "matchAttribute (2 devices)": 109.0}
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def build_cluster(
    nodes: int, per_node: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    node_objs = [
        {"metadata": {"name": f"node-{i:04d}", "labels": {"kubernetes.io/hostname": f"node-{i:04d}"}}}
        for i in range(nodes)
    ]
    slices = []
    for n in node_objs:
        name = n["metadata"]["name"]
        slices.append(
            {
                "metadata": {"name": f"{name}-{DRIVER}"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": name,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": f"dev-{d}",
                            "attributes": {
                                "resource.kubernetes.io/numaNode": {"int": d * 2 // per_node},
                                "model": {"string": "test"},
                            },
                            "capacity": {"memory": {"value": "80Gi"}},
                        }
                        for d in range(per_node)
                    ],
                },
            }
        )
    classes = [
        {
            "metadata": {"name": "test-class"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        }
    ]
    return node_objs, slices, classes


def template(match: bool) -> dict[str, Any]:
    if not match:
        devices: dict[str, Any] = {
            "requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]
        }
    else:
        devices = {
            "requests": [
                {"name": "req-0", "exactly": {"deviceClassName": "test-class"}},
                {"name": "req-1", "exactly": {"deviceClassName": "test-class"}},
            ],
            "constraints": [{"matchAttribute": "resource.kubernetes.io/numaNode"}],
        }
    return {"metadata": {"namespace": "default", "name": "template"}, "spec": {"devices": devices}}


def fill(
    nodes: list[dict[str, Any]], slices: list[dict[str, Any]], classes: list[dict[str, Any]], match: bool
) -> tuple[int, float, float, int]:
    """Allocate claims until none fits; return (claims, wall seconds, CPU seconds, allocate calls)."""
    state = AllocatedState()
    allocator = Allocator(classes=classes, slices=slices, state=state, features=DEFAULT_FEATURES)
    tmpl = template(match)
    allocated = calls = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while True:
        claim_json = copy.deepcopy(tmpl)
        claim_json["metadata"]["name"] = f"claim-{allocated}"
        claim = prepare_claim(claim_json)
        for node in nodes:
            calls += 1
            result = allocator.allocate(node, [claim])
            if result is not None:
                claim_json["status"] = {"allocation": result[0]}
                state.add_claim(claim_json)
                allocated += 1
                break
        else:
            break
    return allocated, time.perf_counter() - start, time.process_time() - cpu_start, calls


def successful_call_seconds(
    nodes: list[dict[str, Any]], slices: list[dict[str, Any]], classes: list[dict[str, Any]], match: bool
) -> float:
    """Mean CPU time of one allocate call that finds devices (empty cluster, warm caches)."""
    allocator = Allocator(classes=classes, slices=slices, state=AllocatedState(), features=DEFAULT_FEATURES)
    claim = prepare_claim(template(match))
    for node in nodes:
        allocator.allocate(node, [claim])
    start = time.process_time()
    for _ in range(5):
        for node in nodes:
            allocator.allocate(node, [claim])
    return (time.process_time() - start) / (5 * len(nodes))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = parser.parse_args()

    load = os.getloadavg()
    nodes, slices, classes = build_cluster(args.nodes, args.devices)
    lines = []
    for label, match in (("one device per claim", False), ("matchAttribute (2 devices)", True)):
        rates, cpu_rates, calls_seen, claims_seen = [], [], 0, 0
        for _ in range(args.repeat):
            claims, seconds, cpu_seconds, calls = fill(nodes, slices, classes, match)
            rates.append(claims / seconds)
            cpu_rates.append(claims / cpu_seconds)
            calls_seen, claims_seen = calls, claims
        median, cpu_median = statistics.median(rates), statistics.median(cpu_rates)
        anchor = ANCHORS[label]
        success_us = (
            statistics.median(successful_call_seconds(nodes, slices, classes, match) for _ in range(3)) * 1e6
        )
        line = (
            f"| {label} | {args.nodes}x{args.devices} | {claims_seen} | {calls_seen} | {median:,.0f} claims/s"
            f" ({median / anchor:.1f}x) | {cpu_median:,.0f} claims/s ({cpu_median / anchor:.1f}x)"
            f" | {success_us:.0f} µs | {anchor:.0f} pods/s |"
        )
        print(line, flush=True)
        lines.append(line)

    if not args.no_record:
        header = (
            f"\n## bench_allocator.py — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n\n"
            f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load average"
            f" {load[0]:.1f} at start (other sessions share the machine), median of {args.repeat} runs. "
            "Each claim tries nodes in order until one fits; allocate calls include the failed ones. "
            "Single-threaded: 'per CPU second' is what one uncontended core does.\n\n"
            "| scenario | cluster | claims | allocate calls | wall-clock throughput (ratio) | per CPU second"
            " (ratio) | one successful call (CPU) | anchor (kube-scheduler, 6 CPU) |\n"
            "|---|---|---|---|---|---|---|---|\n"
        )
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
