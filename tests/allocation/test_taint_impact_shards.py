"""A taint impact split into node shards (one Celery task each) merges into the unsharded answer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from allocation.snapshot import Obj, snapshot_load
from allocation.whatif.base import Budget
from allocation.whatif.kinds.taint_impact import taint_impact_compute, taint_impact_scan
from allocation.whatif.shards import run_sharded
from tests.allocation import whatif_objects as o

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
NO_EXECUTE = {"key": "example.com/broken", "value": "ecc", "effect": "NoExecute"}
SELECTORS = [{"driver": o.DRIVER, "pool": "n0"}, {"driver": o.DRIVER, "pool": "n1"}]
A100 = 'device.attributes["gpu.example.com"].model == "A100"'


def running(name: str, node: str, device: str) -> list[Obj]:
    pod = o.pod(name, node_name=node, claims=[{"name": "gpu", "resourceClaimName": name}])
    return [pod, o.allocated_claim(name, node, device, pod)]


def waiting(name: str, count: int, selector: str | None = None) -> list[Obj]:
    pod = o.pod(name, claims=[{"name": "gpu", "resourceClaimName": name}])
    return [pod, o.claim(name, count=count, selector=selector)]


def cluster() -> list[Obj]:
    """n0..n7, 4 GPUs each (n1's A100). The taint on n0 and n1 evicts 7 pods; room after it: 1 GPU on
    n2, 2 on n4, 4 each on n5..n7, so the evicted pods land on several shards' nodes, in order. Two pods
    wait: one fits only on n1 (A100), the other anywhere."""
    objs: list[Obj] = [o.device_class(extended=None)]
    used = {"n0": 4, "n1": 3, "n2": 3, "n3": 4, "n4": 2}
    for i in range(8):
        n = f"n{i}"
        objs += [o.node(n), o.gpu_slice(n, "A100" if n == "n1" else "H100", count=4)]
        for d in range(used.get(n, 0)):
            objs += running(f"p-{n}-{d}", n, f"gpu-{d}")
    return objs + waiting("wait-a100", 1, A100) + waiting("wait-any", 2)


class OtherWorkers:
    """Shards in `theirs` are answered by "another worker" (`taint_impact_scan`, as the Celery task
    does) when the run asks for results; the run's own worker takes the others."""

    def __init__(self, theirs: set[int]) -> None:
        self.theirs = theirs
        self.payloads: list[dict[str, Any]] = []

    def start(self, payloads: list[dict[str, Any]]) -> None:
        self.payloads = payloads

    def take(self, index: int) -> bool:
        return index not in self.theirs

    def results(self, pending: set[int], *, timeout: float) -> list[tuple[int, dict[str, Any] | None]]:
        out: list[tuple[int, dict[str, Any] | None]] = []
        for p in self.payloads:
            if p["index"] in pending:
                data = p["input"]
                scan = taint_impact_scan(
                    snapshot=snapshot_load(),
                    selectors=data["selectors"],
                    taint=data["taint"],
                    now=datetime.fromisoformat(data["now"]),
                    nodes=p["nodes"],
                )
                out.append((p["index"], scan))
        return out


def sharded(shards: int, queue: Any) -> Callable[[Callable[[list[str]], dict[str, Any]]], Any]:
    data = {"selectors": SELECTORS, "taint": NO_EXECUTE, "now": NOW.isoformat()}
    return lambda scan_here: run_sharded(
        kind="taint_impact",
        data=data,
        snapshot=snapshot_load(),
        shards=shards,
        queue=queue,
        compute=scan_here,
        budget=Budget(),
    )


def impact(**kwargs: Any) -> dict[str, Any]:
    result = taint_impact_compute(
        snapshot=snapshot_load(), selectors=SELECTORS, taint=NO_EXECUTE, now=NOW, **kwargs
    )
    return result.to_json()


@pytest.mark.parametrize(("shards", "theirs"), [(1, set()), (2, {1}), (3, {1, 2}), (3, {2}), (8, {1, 3, 6})])
def test_a_sharded_taint_impact_is_the_unsharded_taint_impact(shards: int, theirs: set[int]) -> None:
    o.store(*cluster())
    whole = impact()
    # The case is one where shards matter: pods go back on four nodes, in pod order, and one
    # waiting pod fits only on a tainted node.
    assert [p["reallocation"] for p in whole["pods"]] == [
        *(f"fits on node {n}" for n in ("n2", "n4", "n4", "n5", "n5", "n5", "n5")),
    ]
    assert whole["pending_unschedulable"] == [
        {"namespace": "default", "name": "wait-a100", "fits_now_on": "n1"}
    ]

    merged = impact(scans=sharded(shards, OtherWorkers(theirs)))

    assert merged == whole


def test_a_shard_that_placed_a_pod_an_earlier_shard_took_is_scanned_again() -> None:
    """Shard 1 (n3..n5) was offered every evicted pod and put the first on n4: taken from its scan
    as it is, one pod would end up on a device another holds, and the last one would fit nowhere."""
    o.store(*cluster())
    calls: list[list[str]] = []

    def counting(scan_here: Callable[[list[str]], dict[str, Any]]) -> list[tuple[list[str], dict[str, Any]]]:
        def scan(nodes: list[str]) -> dict[str, Any]:
            calls.append(nodes)
            return scan_here(nodes)

        parts = [["n0", "n1", "n2"], ["n3", "n4", "n5"], ["n6", "n7"]]
        return [(nodes, scan(nodes)) for nodes in parts]

    merged = impact(scans=counting)

    assert merged == impact()
    assert calls == [["n0", "n1", "n2"], ["n3", "n4", "n5"], ["n6", "n7"]]
