"""The search against a brute-force oracle on many small random cases.

First fit with backtracking must return the first valid assignment in lexicographic order of
choices: claim after claim, request after request, subrequests in order, and the devices of
one request in ascending position. The oracle enumerates exactly that order with itertools
and checks each assignment directly.
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
    first_available,
    resource_slice,
    result,
    sub,
)

MODEL_A = f'device.attributes["{DRIVER}"].model == "a"'
NUMA = "resource.kubernetes.io/numaNode"
Spec = dict[str, Any]


def _case(rng: random.Random) -> tuple[list[Spec], list[str], list[Spec]]:
    devs = [
        {
            "name": f"d{i}",
            "numa": rng.randint(0, 2),
            "model": rng.choice("ab"),
            "numa_missing": rng.random() < 0.1,
        }
        for i in range(rng.randint(2, 7))
    ]
    in_use = [d["name"] for d in devs if rng.random() < 0.2]
    claims = []
    for c in range(rng.randint(1, 2)):
        requests = []
        for j in range(rng.randint(1, 2)):
            subs = [
                {"name": f"s{k}", "count": rng.randint(1, 2), "model_a": rng.random() < 0.4}
                for k in range(rng.choice((0, 0, 2)))
            ]
            requests.append(
                {"name": f"r{j}", "count": rng.randint(1, 2), "model_a": rng.random() < 0.4, "subs": subs}
            )
        constraints = []
        if rng.random() < 0.6:
            kind = rng.choice(("matchAttribute", "matchAttribute", "distinctAttribute"))
            names = [r["name"] for r in requests if rng.random() < 0.7]
            constraints.append({"requests": names, kind: NUMA} if names else {kind: NUMA})
        claims.append({"name": f"c{c}", "requests": requests, "constraints": constraints})
    return devs, in_use, claims


def _alternatives(request: Spec) -> list[tuple[str, Spec]]:
    if request["subs"]:
        return [(f"{request['name']}/{s['name']}", s) for s in request["subs"]]
    return [(request["name"], request)]


def _oracle(devs: list[Spec], in_use: list[str], claims: list[Spec]) -> list[list[str]] | None:
    free = [i for i, d in enumerate(devs) if d["name"] not in in_use]
    slots = []  # one per (claim, request): every (result name, device combination) in search order
    for c in claims:
        for r in c["requests"]:
            options = []
            for name, spec in _alternatives(r):
                fits = [i for i in free if not spec["model_a"] or devs[i]["model"] == "a"]
                options.extend((name, combo) for combo in itertools.combinations(fits, spec["count"]))
            slots.append(options)
    for choice in itertools.product(*slots):
        chosen = [i for _, combo in choice for i in combo]
        if len(set(chosen)) != len(chosen):
            continue
        out, pos, ok = [], 0, True
        for c in claims:
            picks = choice[pos : pos + len(c["requests"])]
            pos += len(c["requests"])
            for con in c["constraints"]:
                names = set(con.get("requests") or [r["name"] for r in c["requests"]])
                devices = [
                    i for name, combo in picks if name.split("/")[0] in names or name in names for i in combo
                ]
                if any(devs[i]["numa_missing"] for i in devices):
                    ok = False
                values = [devs[i]["numa"] for i in devices]
                if "matchAttribute" in con and len(set(values)) > 1:
                    ok = False
                if "distinctAttribute" in con and len(set(values)) != len(values):
                    ok = False
            out.append([f"{name}=d{i}" for name, combo in picks for i in combo])
        if ok:
            return out
    return None


def _request_json(r: Spec) -> dict[str, Any]:
    if r["subs"]:
        return first_available(
            r["name"],
            *(
                sub(s["name"], count=s["count"], selectors=(MODEL_A,) if s["model_a"] else ())
                for s in r["subs"]
            ),
        )
    return exactly(r["name"], count=r["count"], selectors=(MODEL_A,) if r["model_a"] else ())


@pytest.mark.parametrize("seed", range(300))
def test_it_finds_the_same_first_solution_as_exhaustive_enumeration(seed: int) -> None:
    devs, in_use, claims = _case(random.Random(seed))
    slices = [
        resource_slice(
            "s",
            [
                device(
                    d["name"], attrs={"model": d["model"], **({} if d["numa_missing"] else {NUMA: d["numa"]})}
                )
                for d in devs
            ],
        )
    ]
    claim_jsons = [
        claim(c["name"], *(_request_json(r) for r in c["requests"]), constraints=c["constraints"])
        for c in claims
    ]
    allocator = Allocator(
        classes=[GPU_CLASS],
        slices=slices,
        allocated_claims=[allocated("busy", *(result(name) for name in in_use))] if in_use else [],
        features=DEFAULT_FEATURES,
    )
    got = allocator.allocate(NODE, claim_jsons)
    compact = (
        None
        if got is None
        else [[f"{r['request']}={r['device']}" for r in a["devices"]["results"]] for a in got]
    )
    assert compact == _oracle(devs, in_use, claims)
