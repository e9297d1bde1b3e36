"""A headroom split into node shards (one Celery task each) merges into the unsharded answer."""

from __future__ import annotations

from typing import Any

import pytest

from allocation.snapshot import snapshot_load
from allocation.whatif.base import Budget
from allocation.whatif.kinds.headroom import headroom
from allocation.whatif.shards import headroom_sharded, shardable, split
from allocation.whatif.subject import resolve_subject
from tests.allocation import whatif_objects as o
from tests.allocation.test_whatif_dedupe import cluster

pytestmark = pytest.mark.django_db

DATA = {"source": "class", "deviceClassName": o.DRIVER, "count": 1, "max_per_node": 64}


class OtherWorkers:
    """Shards in `theirs` are started by "another worker" (computed when the run asks for results,
    in the order given); the rest are left for the run's own worker to take."""

    def __init__(self, theirs: set[int], order: list[int] | None = None) -> None:
        self.theirs = theirs
        self.order = order
        self.payloads: list[dict[str, Any]] = []

    def start(self, payloads: list[dict[str, Any]]) -> None:
        self.payloads = payloads

    def take(self, index: int) -> bool:
        return index not in self.theirs

    def results(self, pending: set[int], *, timeout: float) -> list[tuple[int, dict[str, Any] | None]]:
        by_index = {p["index"]: p for p in self.payloads}
        out = []
        for i in self.order or sorted(pending):
            p = by_index[i]
            if i in pending:
                snapshot = snapshot_load()
                subject = resolve_subject(p["input"], snapshot)
                out.append(
                    (i, headroom(snapshot=snapshot, subject=subject, max_per_node=64, only_nodes=p["nodes"]))
                )
        return out


def visible(result: dict[str, Any]) -> dict[str, Any]:
    """What a user reads: every figure but which nodes were computed and which reused an answer."""
    out = {k: v for k, v in result.items() if k not in ("computed_nodes", "shards", "per_node")}
    out["per_node"] = [{k: v for k, v in n.items() if k != "same_as"} for n in result["per_node"]]
    return out


@pytest.mark.parametrize(
    ("shards", "theirs", "order"),
    [(1, set(), None), (2, {1}, None), (3, {1, 2}, [2, 1]), (5, {2, 4}, [4, 2]), (40, {1, 7, 12}, None)],
)
def test_a_sharded_headroom_is_the_unsharded_headroom(
    shards: int, theirs: set[int], order: list[int] | None
) -> None:
    o.store(*cluster())
    snapshot = snapshot_load()
    subject = resolve_subject(DATA, snapshot)
    whole = headroom(snapshot=snapshot, subject=subject, max_per_node=64)
    queue = OtherWorkers(theirs, order)
    merged = headroom_sharded(
        data=DATA,
        snapshot=snapshot,
        shards=shards,
        queue=queue,
        compute=lambda nodes: headroom(snapshot=snapshot, subject=subject, max_per_node=64, only_nodes=nodes),
        budget=Budget(),
    )
    assert visible(merged) == visible(whole)
    assert merged["shards"] == min(shards, whole["nodes_total"])
    assert len(queue.payloads) == merged["shards"] - 1  # shard 0 is the run's own


def test_a_shard_another_worker_could_not_answer_is_computed_by_the_run() -> None:
    o.store(*cluster())
    snapshot = snapshot_load()
    subject = resolve_subject(DATA, snapshot)

    class Stale(OtherWorkers):
        def results(self, pending: set[int], *, timeout: float) -> list[tuple[int, dict[str, Any] | None]]:
            return [(i, {"stale": True}) for i in sorted(pending)]

    merged = headroom_sharded(
        data=DATA,
        snapshot=snapshot,
        shards=3,
        queue=Stale({1, 2}),
        compute=lambda nodes: headroom(snapshot=snapshot, subject=subject, max_per_node=64, only_nodes=nodes),
        budget=Budget(),
    )
    assert visible(merged) == visible(headroom(snapshot=snapshot, subject=subject, max_per_node=64))


def test_split_keeps_node_order_in_nearly_equal_parts() -> None:
    nodes = [f"n{i:02d}" for i in range(10)]
    parts = split(nodes, 3)
    assert [len(p) for p in parts] == [4, 3, 3]
    assert [n for p in parts for n in p] == nodes
    assert split(nodes[:2], 5) == [["n00"], ["n01"]]


def test_only_node_bound_pools_are_split() -> None:
    objs = cluster()
    o.store(*objs)
    assert shardable(snapshot_load())
    shared = o.gpu_slice("fabric", "H100")
    del shared["spec"]["nodeName"]
    shared["spec"]["allNodes"] = True
    o.store(shared)
    assert not shardable(snapshot_load())
