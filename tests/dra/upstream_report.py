"""How many of upstream's allocator cases our allocator answers as upstream does.

    python -m tests.dra.upstream_report [-v]

Runs every ported case (``tests/dra/test_allocator_upstream_*.py``) against upstream's expected answer,
ignoring the deliberate differences the cases document (those count as not matching), and checks
that every case name in ``upstream_allocator_cases.txt`` is ported exactly once. ``-v`` lists each case.
Search step counts (upstream's NumAllocateOneInvocations) are reported separately: they are not part
of the answer.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.dra.upstream_cases import Ported, run, verdict

HERE = Path(__file__).parent
MODULES = ("basics", "all", "pools", "prioritized", "taints_binding", "capacity", "lists")


def ported_cases() -> list[Ported]:
    cases: list[Ported] = []
    for name in MODULES:
        module = importlib.import_module(f"tests.dra.test_allocator_upstream_{name}")
        cases.extend(module.CASES)
    return cases


def upstream_names() -> list[str]:
    lines = (HERE / "upstream_allocator_cases.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@dataclass(frozen=True)
class Report:
    total: int
    matching: list[str]
    failing: list[tuple[str, str]]
    deliberate: list[tuple[str, str]]
    missing: list[str]
    duplicated: list[str]
    unknown: list[str]
    steps_checked: int
    steps_differing: list[tuple[str, int, int]]


def report() -> Report:
    cases = ported_cases()
    names = upstream_names()
    seen: dict[str, int] = {}
    for case in cases:
        seen[case.upstream] = seen.get(case.upstream, 0) + 1
    matching: list[str] = []
    failing: list[tuple[str, str]] = []
    deliberate: list[tuple[str, str]] = []
    steps_checked = 0
    steps_differing: list[tuple[str, int, int]] = []
    for case in cases:
        outcome = run(case)
        problem = verdict(case.expect, outcome)
        if not problem:
            matching.append(case.upstream)
        elif case.differs:
            deliberate.append((case.upstream, case.differs))
        else:
            failing.append((case.upstream, problem))
        if case.steps is not None:
            steps_checked += 1
            if outcome.steps != case.steps:
                steps_differing.append((case.upstream, case.steps, outcome.steps))
    return Report(
        total=len(names),
        matching=matching,
        failing=failing,
        deliberate=deliberate,
        missing=[n for n in names if n not in seen],
        duplicated=[n for n, count in seen.items() if count > 1],
        unknown=[n for n in seen if n not in names],
        steps_checked=steps_checked,
        steps_differing=steps_differing,
    )


def main(argv: list[str]) -> int:
    r = report()
    verbose = "-v" in argv
    if verbose:
        for name in r.matching:
            print(f"ok        {name}")
    for name, why in r.deliberate:
        print(f"DIFFERS   {name}: {why}")
    for name, why in r.failing:
        print(f"FAILS     {name}: {why}")
    for name in r.missing:
        print(f"MISSING   {name}")
    for name in r.duplicated:
        print(f"TWICE     {name}")
    for name in r.unknown:
        print(f"UNKNOWN   {name} (not in upstream_allocator_cases.txt)")
    for name, want, have in r.steps_differing:
        print(f"STEPS     {name}: upstream {want}, ours {have}")
    share = 100.0 * len(r.matching) / r.total if r.total else 0.0
    print(
        f"{len(r.matching)} of {r.total} upstream allocator cases give upstream's answer ({share:.1f}%);"
        f" {len(r.deliberate)} differ deliberately, {len(r.failing)} differ otherwise, {len(r.missing)} not ported."
    )
    print(
        f"search steps: {r.steps_checked - len(r.steps_differing)} of {r.steps_checked} stated counts equal"
    )
    return 0 if not r.failing and not r.missing and not r.duplicated and not r.unknown else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
