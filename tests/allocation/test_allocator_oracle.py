"""The search against a brute-force oracle on many small random cases.

First fit with backtracking must return the first valid assignment in lexicographic order of
device positions (request after request, devices of one request in ascending order). The
oracle enumerates exactly that order with itertools and checks each assignment directly.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from allocation.allocator import DEFAULT_FEATURES, Allocator
from tests.allocation.allocator_cases import (
    DRIVER,
    GPU_CLASS,
    NODE,
    allocated,
    claim,
    device,
    exactly,
    resource_slice,
    result,
)

MODEL_A = f'device.attributes["{DRIVER}"].model == "a"'
NUMA = "resource.kubernetes.io/numaNode"


def _case(
    rng: random.Random,
) -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    n = rng.randint(2, 7)
    devs = [
        {
            "name": f"d{i}",
            "numa": rng.randint(0, 1),
            "model": rng.choice("ab"),
            "numa_missing": rng.random() < 0.1,
        }
        for i in range(n)
    ]
    in_use = [d["name"] for d in devs if rng.random() < 0.2]
    requests = [
        {"name": f"r{j}", "count": rng.randint(1, 2), "model_a": rng.random() < 0.4}
        for j in range(rng.randint(1, 3))
    ]
    constraints = []
    if rng.random() < 0.6:
        names = [r["name"] for r in requests if rng.random() < 0.7]
        constraints.append({"requests": names, "matchAttribute": NUMA} if names else {"matchAttribute": NUMA})
    return devs, in_use, requests, constraints


def _oracle(
    devs: list[dict[str, Any]],
    in_use: list[str],
    requests: list[dict[str, Any]],
    constraints: list[dict[str, Any]],
) -> list[str] | None:
    free = [i for i, d in enumerate(devs) if d["name"] not in in_use]
    options = []
    for r in requests:
        fits = [i for i in free if not r["model_a"] or devs[i]["model"] == "a"]
        options.append(list(itertools.combinations(fits, r["count"])))
    for choice in itertools.product(*options):
        chosen = [i for combo in choice for i in combo]
        if len(set(chosen)) != len(chosen):
            continue
        ok = True
        for c in constraints:
            applies = set(c.get("requests") or [r["name"] for r in requests])
            picked = [
                i for r, combo in zip(requests, choice, strict=True) if r["name"] in applies for i in combo
            ]
            if any(devs[i]["numa_missing"] for i in picked) or len({devs[i]["numa"] for i in picked}) > 1:
                ok = False
        if ok:
            return [f"{r['name']}=d{i}" for r, combo in zip(requests, choice, strict=True) for i in combo]
    return None


@pytest.mark.parametrize("seed", range(300))
def test_it_finds_the_same_first_solution_as_exhaustive_enumeration(seed: int) -> None:
    rng = random.Random(seed)
    devs, in_use, requests, constraints = _case(rng)
    slices = [
        resource_slice(
            "s",
            [
                device(
                    d["name"],
                    attrs={"model": d["model"], **({} if d["numa_missing"] else {NUMA: d["numa"]})},
                )
                for d in devs
            ],
        )
    ]
    the_claim = claim(
        "c",
        *(
            exactly(r["name"], count=r["count"], selectors=(MODEL_A,) if r["model_a"] else ())
            for r in requests
        ),
        constraints=constraints,
    )
    allocator = Allocator(
        classes=[GPU_CLASS],
        slices=slices,
        allocated_claims=[allocated("busy", *(result(name) for name in in_use))] if in_use else [],
        features=DEFAULT_FEATURES,
    )
    got = allocator.allocate(NODE, [the_claim])
    compact = None if got is None else [f"{r['request']}={r['device']}" for r in got[0]["devices"]["results"]]
    assert compact == _oracle(devs, in_use, requests, constraints)
