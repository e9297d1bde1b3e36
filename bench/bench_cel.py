"""CEL selector throughput: compiled-and-cached vs compiled-each-time, over 10,000 devices.

The typical selector is the one measured in libraries.md §3 (quantity compareTo, semver comparison,
a domain test), adapted to read memory from capacity as a real ResourceSlice device does. Devices are
ResourceSlice device JSON converted once with ``device_input_from_api``; a third of them match.

Scenarios, each repeated ``--repeat`` times (the median is reported):

* cached: ``engine.compile(expr)`` (an LRU hit) then ``matches`` for each device — the allocator's path.
* compiled each time: a fresh compile (parse, check, AST rewrite) then ``matches`` for each device.
  Compiling costs milliseconds, so this runs on the first ``--compile-devices`` devices only and
  reports the same per-evaluation rate.

Times are CPU seconds of this process (``time.process_time``), not wall time.
The ratio cached / compiled-each-time is the anchor of this benchmark (same run, same machine).

    .venv/bin/python bench/bench_cel.py [--devices 10000] [--repeat 5] [--compile-devices 500] [--no-record]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dra.allocator.cel import CelExprEngine, DeviceInput, device_input_from_api  # noqa: E402

DRIVER = "gpu.example.com"
TYPICAL = (
    'device.driver == "gpu.example.com"'
    ' && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
    ' && device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))'
    ' && "dra.example.com" in device.attributes'
)
SIMPLE = 'device.attributes["gpu.example.com"].model == "h200"'
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def build_devices(count: int) -> list[dict[str, Any]]:
    devices = []
    for i in range(count):
        devices.append(
            {
                "name": f"gpu-{i}",
                "attributes": {
                    "model": {"string": "h200" if i % 2 else "a100"},
                    "driverVersion": {"version": f"1.{i % 3 + 1}.0"},
                    "index": {"int": i % 8},
                    "resource.kubernetes.io/numaNode": {"int": i % 2},
                    "dra.example.com/model": {"string": "A100"},
                },
                "capacity": {"memory": {"value": f"{(i % 3) * 20 + 20}Gi"}},
            }
        )
    return devices


def timed(run: Callable[[], int]) -> tuple[float, int]:
    # CPU time of this process: the 2-core machine is shared with other work, so wall time is noisy.
    start = time.process_time()
    matched = run()
    return time.process_time() - start, matched


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--devices", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compile-devices", type=int, default=500)
    parser.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = parser.parse_args()

    raw = build_devices(args.devices)
    convert_seconds, _ = timed(lambda: len([device_input_from_api(DRIVER, d) for d in raw]))
    devices: list[DeviceInput] = [device_input_from_api(DRIVER, d) for d in raw]
    engine = CelExprEngine()
    activation_seconds, _ = timed(lambda: len([engine.activation(d) for d in devices]))

    def cached(expression: str) -> Callable[[], int]:
        return lambda: sum(engine.compile(expression).matches(d) for d in devices)

    def each_time(expression: str) -> Callable[[], int]:
        subset = devices[: args.compile_devices]
        return lambda: sum(CelExprEngine._compile_uncached(engine, expression).matches(d) for d in subset)

    rows: list[tuple[str, float, int, int]] = []  # label, evals/s median, evaluated, matched
    for label, expression in (("typical", TYPICAL), ("simple", SIMPLE)):
        engine.compile(expression)  # warm the cache and the library's parse caches
        for mode, factory, n in (
            ("cached", cached, len(devices)),
            ("compiled each time", each_time, min(args.compile_devices, len(devices))),
        ):
            rates, matched = [], 0
            for _ in range(args.repeat):
                seconds, matched = timed(factory(expression))
                rates.append(n / seconds)
            rows.append((f"{label}, {mode}", statistics.median(rates), n, matched))

    print(
        f"{args.devices} devices; conversion {convert_seconds / len(devices) * 1e6:.1f} µs/device, "
        f"activation {activation_seconds / len(devices) * 1e6:.1f} µs/device (once per device)"
    )
    lines = []
    by_label = {label: rate for label, rate, _, _ in rows}
    for label, rate, n, matched in rows:
        print(f"{label:32s} {rate:>12,.0f} evals/s  ({1e6 / rate:8.1f} µs/eval, {matched}/{n} matched)")
        lines.append(f"| {label} | {n} | {matched} | {rate:,.0f} evals/s | {1e6 / rate:.1f} µs |")
    ratios = []
    for label in ("typical", "simple"):
        ratio = by_label[f"{label}, cached"] / by_label[f"{label}, compiled each time"]
        ratios.append(f"{label}: cached is {ratio:.0f}x faster than compiling each time")
        print(ratios[-1])

    if not args.no_record:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        header = (
            f"\n## bench_cel.py — {stamp}\n\n"
            f"Machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
            f"Python {platform.python_version()}, cel-expr-python 0.1.3, "
            f"load average {os.getloadavg()[0]:.1f} at the end (the machine is shared). "
            f"Median of {args.repeat} runs (process CPU time); {args.devices} devices "
            f"(compiled-each-time on the first {args.compile_devices}).\n"
            f"Device conversion {convert_seconds / len(devices) * 1e6:.1f} µs/device, CEL activation "
            f"{activation_seconds / len(devices) * 1e6:.1f} µs/device, both once per device.\n\n"
            "| selector, mode | devices | matched | median | per evaluation |\n|---|---|---|---|---|\n"
        )
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(header + "\n".join(lines) + "\n\n" + "; ".join(ratios) + ".\n")


if __name__ == "__main__":
    main()
