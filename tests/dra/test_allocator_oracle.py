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

from dra.allocator import DEFAULT_FEATURES, Allocator
from tests.dra.allocator_cases import (
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


# ----------------------------------------------------------------------------- counters, taints, sharing

TAINT = {"key": "example.com/flaky", "value": "yes", "effect": "NoSchedule"}
TOLERATE = [{"key": "example.com/flaky", "operator": "Exists"}]
COUNTER_TOTAL = 8
BANDWIDTH = 10


def _resource_case(rng: random.Random) -> tuple[list[Spec], list[Spec], list[Spec]]:
    """Partitionable devices drawing on one counter, tainted devices, one shareable NIC-like device.

    Tainted devices draw on no counter: upstream takes a device's counters before it looks at
    its taints and does not give them back for the rest of the attempt, which depends on the
    search order and is not what this oracle enumerates (`test_allocator.py` has the case)."""
    devs: list[Spec] = []
    for i in range(rng.randint(2, 5)):
        tainted = rng.random() < 0.25
        devs.append(
            {
                "name": f"p{i}",
                "uses": 0 if tainted else rng.choice((0, 2, 4, 6)),
                "tainted": tainted,
                "multi": False,
            }
        )
    if rng.random() < 0.7:
        devs.append({"name": "m0", "uses": 0, "tainted": False, "multi": True})
    busy = [
        {"name": d["name"], "bw": rng.randint(1, 6) if d["multi"] else 0} for d in devs if rng.random() < 0.2
    ]
    requests = []
    for j in range(rng.randint(1, 3)):
        requests.append(
            {
                "name": f"r{j}",
                "count": rng.randint(1, 2),
                "tolerates": rng.random() < 0.4,
                "bw": rng.choice((None, None, 3, 5)),
            }
        )
    return devs, busy, requests


def _resource_oracle(devs: list[Spec], busy: list[Spec], requests: list[Spec]) -> list[str] | None:
    exclusive_busy = {b["name"] for b in busy if not next(d for d in devs if d["name"] == b["name"])["multi"]}
    busy_bw = sum(b["bw"] for b in busy if b["name"] == "m0")
    base_uses = sum(d["uses"] for d in devs if d["name"] in exclusive_busy)

    def usable(i: int, r: Spec) -> bool:
        d = devs[i]
        if d["tainted"] and not r["tolerates"]:
            return False
        if r["bw"] is not None and not d["multi"]:
            return False  # asks for a capacity the device does not have
        return d["multi"] or d["name"] not in exclusive_busy

    options = [
        list(itertools.combinations([i for i in range(len(devs)) if usable(i, r)], r["count"]))
        for r in requests
    ]
    for choice in itertools.product(*options):
        exclusive = [i for combo in choice for i in combo if not devs[i]["multi"]]
        if len(set(exclusive)) != len(exclusive):
            continue
        # Counters are only checked for devices that consume some (then against what is in use).
        if (
            any(devs[i]["uses"] for i in exclusive)
            and base_uses + sum(devs[i]["uses"] for i in exclusive) > COUNTER_TOTAL
        ):
            continue
        shares = [
            r["bw"] if r["bw"] is not None else BANDWIDTH
            for r, combo in zip(requests, choice, strict=True)
            for i in combo
            if devs[i]["multi"]
        ]
        if shares and busy_bw + sum(shares) > BANDWIDTH:
            continue
        return [
            f"{r['name']}={devs[i]['name']}" for r, combo in zip(requests, choice, strict=True) for i in combo
        ]
    return None


@pytest.mark.parametrize("seed", range(200))
def test_it_respects_counters_taints_and_shared_capacity_like_exhaustive_enumeration(seed: int) -> None:
    devs, busy, requests = _resource_case(random.Random(seed))
    counters = [{"name": "mem", "counters": {"memory": {"value": str(COUNTER_TOTAL)}}}]
    device_jsons = []
    for d in devs:
        extra: dict[str, Any] = {}
        if d["uses"]:
            extra["consumesCounters"] = [
                {"counterSet": "mem", "counters": {"memory": {"value": str(d["uses"])}}}
            ]
        if d["tainted"]:
            extra["taints"] = [TAINT]
        if d["multi"]:
            extra["allowMultipleAllocations"] = True
            extra["capacity"] = {"bandwidth": {"value": str(BANDWIDTH)}}
        device_jsons.append(device(d["name"], **extra))
    slices = [
        resource_slice("counters", [], node=None, count=2, sharedCounters=counters),
        resource_slice("devices", device_jsons, count=2),
    ]
    busy_claims = [
        allocated(
            f"busy-{b['name']}",
            result(
                b["name"],
                shareID="11111111-1111-4111-8111-111111111111",
                consumedCapacity={"bandwidth": str(b["bw"])},
            )
            if b["bw"]
            else result(b["name"]),
        )
        for b in busy
    ]
    the_claim = claim(
        "c",
        *(
            exactly(
                r["name"],
                count=r["count"],
                **({"tolerations": TOLERATE} if r["tolerates"] else {}),
                **({"capacity": {"requests": {"bandwidth": str(r["bw"])}}} if r["bw"] is not None else {}),
            )
            for r in requests
        ),
    )
    allocator = Allocator(
        classes=[GPU_CLASS], slices=slices, allocated_claims=busy_claims, features=DEFAULT_FEATURES
    )
    got = allocator.allocate(NODE, [the_claim])
    compact = None if got is None else [f"{r['request']}={r['device']}" for r in got[0]["devices"]["results"]]
    assert compact == _resource_oracle(devs, busy, requests)
