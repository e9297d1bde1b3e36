"""Arbitrary selectors either evaluate or raise CelError: never another exception, never a crash (both backends).

cel-expr-python segfaults when some values (optionals) reach Python functions, so the engine refuses
those expressions at compile time. This test generates expressions from a fixed seed, mixing device
data, Kubernetes values, optionals and the library functions, and runs them in a child process so a
crash shows up as a failing test naming the expression rather than killing the test run.
"""

from __future__ import annotations

import contextlib
import random
import subprocess
import sys
from pathlib import Path

import pytest

ATOMS = [
    'device.attributes["gpu.example.com"]',
    'device.attributes["x.com"]',
    'device.capacity["gpu.example.com"]',
    "device.attributes",
    "device.driver",
    'device.attributes["gpu.example.com"].model',
    'device.attributes["gpu.example.com"].l',
    'device.attributes["gpu.example.com"].v',
    'device.capacity["gpu.example.com"].m',
    "1",
    "1u",
    "2.0",
    '"a"',
    'b"x"',
    "true",
    "null",
    "[1, 2]",
    '{"a": 1}',
    'quantity("1Ki")',
    'semver("1.0.0")',
    'ip("::1")',
    'cidr("10.0.0.0/8")',
    'duration("1s")',
    "type(1)",
    "[null]",
    "optional.none()",
    "optional.of(1)",
    'device.attributes["gpu.example.com"].?model',
    'device.attributes["gpu.example.com"][?"model"]',
    "dyn(1)",
]
UNARY = [
    "!{}",
    "size({})",
    "string({})",
    "has({}.model)",
    "{}.?model",
    "{}.?model.orValue(1)",
    '{}[?"model"]',
    "optional.of({})",
    "dyn({})",
    "{}.all(x, x == x)",
    "{}.exists(k, v, true)",
    "{}.map(x, x)",
    "cel.bind(q, {}, q)",
    "{}.sum()",
    "{}.min()",
    "{}.isSorted()",
    "{}.includes(1)",
    "{}.indexOf(1)",
    "{}.compareTo({})",
    '{}.isGreaterThan(quantity("1"))',
    "{}.asInteger()",
    "{}.major()",
    "{}.lowerAscii()",
    '{}.find("a")',
    "{}.family()",
    '{}.containsIP("1.2.3.4")',
    "{}.model",
    '"model" in {}',
    "{}.orValue(1)",
    "{}.hasValue()",
    "[{}].sum()",
]
BINARY = [
    "{} == {}",
    "{} < {}",
    "{} && {}",
    "{} || {}",
    "{} + {}",
    "true ? {} : {}",
    "[{}, {}]",
    '{{"k": {}, "j": {}}}',
    "sets.contains({}, {})",
    "1 < 2.5 && {} == {}",
]
SEED, COUNT = 20261129, 1500
# Expressions that crashed cel-expr-python before the engine refused them (found by this generator).
KNOWN_CRASHERS = [
    "optional.of(1).includes(1)",
    "[optional.of(1)].sum() == 1",
    "[1].indexOf(optional.of(1)) == 0",
    "dyn(optional.of(1)).includes(1)",
    "(true ? optional.of(1) : dyn(1)).includes(1)",
    '{"k": dyn(device.attributes["gpu.example.com"][?"model"])}',
    'cel.bind(o, device.attributes["gpu.example.com"][?"model"], o.includes("h"))',
    '{"a": optional.of(1)}',
]


def generate(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(ATOMS)
    if rng.random() < 0.6:
        return rng.choice(UNARY).replace("{}", generate(rng, depth - 1), 1).replace("{}", generate(rng, 0))
    return rng.choice(BINARY).format(generate(rng, depth - 1), generate(rng, depth - 1))


def run(seed: int, count: int, backend: str) -> None:
    """Child process: print each expression before evaluating it; exit non-zero on a foreign exception."""
    from dra.allocator.cel import CelError, device_input_from_api, new_engine

    device = device_input_from_api(
        "gpu.example.com",
        {
            "name": "g",
            "attributes": {"model": {"string": "h"}, "v": {"version": "1.0.0"}, "l": {"ints": [1, 2]}},
            "capacity": {"m": {"value": "1Gi"}},
        },
    )
    engine = new_engine(backend, cache_size=32)
    rng = random.Random(seed)
    for expression in KNOWN_CRASHERS + [generate(rng, 3) for _ in range(count)]:
        print(expression, flush=True)
        with contextlib.suppress(CelError):
            engine.compile(expression).matches(device)
        with contextlib.suppress(CelError):
            engine.compile_value(expression).evaluate(device)
    print("DONE", flush=True)


@pytest.mark.parametrize("backend", ["cel-expr-python", "cel-python"])
def test_it_answers_or_raises_cel_error_for_arbitrary_expressions(backend: str) -> None:
    root = Path(__file__).resolve().parents[2]
    child = subprocess.run(
        [sys.executable, __file__, str(SEED), str(COUNT), backend],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = child.stdout.splitlines()
    last = lines[-1] if lines else "<no output>"
    assert child.returncode == 0 and last == "DONE", (
        f"exit {child.returncode} while evaluating: {last}\n{child.stderr[-2000:]}"
    )


if __name__ == "__main__":
    run(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
