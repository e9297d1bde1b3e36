"""CEL selector speed on both backends in one run, cel-expr-python (the default) as the anchor.

Selectors (devices are ResourceSlice device JSON converted with ``device_input_from_api``):

* class: a DeviceClass selector as drivers ship them (the driver and a string attribute); half match.
* claim: a claim request selector with a Quantity ``compareTo``, a Semver comparison and a domain test
  (libraries.md §3's typical selector, memory read from capacity); a third match.

Measured per backend, each repeated ``--repeat`` times (the median is reported):

* compile: a fresh compile (parse, check, rewrite or lowering, cost estimate) of the selector, through an
  engine whose cache holds nothing, so every ``compile`` compiles;
* first evaluation per device: includes converting the device to the engine's form, which real use does
  once per device (a DeviceInput caches it);
* cached evaluation: the allocator's path, ``compile`` a cache hit and the device already converted.

Times are CPU seconds of this process (``time.process_time``): the 2-core machine is shared, so wall time
is noisy. The ratio cel-python / cel-expr-python is printed for each measurement.

    .venv/bin/python bench/bench_cel.py [--devices 5000] [--repeat 3] [--compiles 50] [--no-record]
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
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dra.allocator.cel import BACKEND_NAMES, device_input_from_api, new_engine  # noqa: E402

DRIVER = "gpu.example.com"
CLASS = 'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "h200"'
CLAIM = (
    'device.driver == "gpu.example.com"'
    ' && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
    ' && device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))'
    ' && "dra.example.com" in device.attributes'
)
SELECTORS = {"class": CLASS, "claim": CLAIM}
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


def median_seconds(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def measure(name: str, raw: list[dict[str, Any]], repeat: int, compiles: int) -> dict[str, tuple[float, int]]:
    """label -> (seconds per unit, matched devices or 0)."""
    out: dict[str, tuple[float, int]] = {}
    uncached = new_engine(name, cache_size=0)
    engine = new_engine(name)
    for label, expression in SELECTORS.items():

        def compile_many(expression: str = expression) -> None:
            for _ in range(compiles):
                uncached.compile(expression)

        uncached.compile(expression)  # warm up: the parser and library tables are built on first use
        out[f"compile, {label} selector"] = (median_seconds(compile_many, repeat) / compiles, 0)
        selector = engine.compile(expression)
        firsts = []
        for _ in range(repeat):
            fresh = [device_input_from_api(DRIVER, d) for d in raw]  # converted inside the timing
            start = time.process_time()
            matched = sum(selector.matches(d) for d in fresh)
            firsts.append(time.process_time() - start)
        out[f"first evaluation per device (with conversion), {label}"] = (
            statistics.median(firsts) / len(raw),
            matched,
        )
        devices = [device_input_from_api(DRIVER, d) for d in raw]
        for d in devices:
            selector.matches(d)

        def cached(expression: str = expression, devices: list[Any] = devices) -> int:
            return sum(engine.compile(expression).matches(d) for d in devices)

        out[f"cached evaluation, {label}"] = (median_seconds(cached, repeat) / len(raw), cached())
    return out


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--devices", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compiles", type=int, default=50)
    parser.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = parser.parse_args()

    raw = build_devices(args.devices)
    load_start = os.getloadavg()[0]
    results = {name: measure(name, raw, args.repeat, args.compiles) for name in BACKEND_NAMES}
    anchor, other = BACKEND_NAMES
    lines = []
    for label, (seconds, matched) in results[anchor].items():
        slow, other_matched = results[other][label]
        assert matched == other_matched, (
            f"{label}: the backends disagree ({matched} vs {other_matched} matched)"
        )
        evals = f", {1 / seconds:,.0f} / {1 / slow:,.0f} evals/s" if label.startswith("cached") else ""
        shown = f"{label}{f' ({matched} of {args.devices} match)' if matched else ''}"
        lines.append(f"| {shown} | {_time(seconds)} | {_time(slow)} | {slow / seconds:.1f}x{evals} |")
        print(f"{shown:70s} {_time(seconds):>10s} {_time(slow):>10s} {slow / seconds:6.1f}x")

    if not args.no_record:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        header = (
            f"\n## bench_cel.py — {stamp}\n\n"
            f"Machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
            f"Python {platform.python_version()}; cel-expr-python {version('cel-expr-python')}, "
            f"cel-python {version('cel-python')}; load average {load_start:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end (the machine is shared). Median of {args.repeat} runs "
            f"(process CPU time); {args.devices} devices; compile times over {args.compiles} compiles.\n\n"
            f"| measurement | {anchor} | {other} | {other} / {anchor} |\n|---|---|---|---|\n"
        )
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
