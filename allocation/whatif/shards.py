"""A large headroom or taint impact split across Celery workers: the node list in contiguous shards,
one task each (a Celery group on Redis), results merged in node order by the kind.

Only exact splits are made: every pool is bound to one node by name (no shared pools), so placing
claims on one node never changes what another can hold, and each shard's answer is the answer for
its nodes (a kind whose placements depend on earlier nodes checks that when it merges, see
`taint_impact`). Otherwise, and without a Redis broker, the run stays in one process.

No worker waits on another: the run's own worker computes shard 0, then takes every shard no worker
has started yet (a Redis SET NX per shard decides who computes it), then waits for the rest. With one
worker slot the run simply computes everything itself. A shard answered on another resourceVersion
than the run's snapshot, or that failed, is computed again here, so errors and answers are those of
the unsharded run. Results travel through a Redis list (Celery has no result backend here).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from django.conf import settings

from allocation.snapshot import Snapshot, snapshot_load
from allocation.whatif.base import Budget, Progress, no_progress
from allocation.whatif.view import node_names

log = logging.getLogger(__name__)

#: the Celery task that answers one shard (allocation.tasks registers it)
SHARD_TASK = "allocation.whatif_shard"
#: what-if kind → how a worker answers one shard of it: compute(input, nodes, snapshot, budget)
ShardCompute = Callable[[dict[str, Any], list[str], Snapshot, Budget], dict[str, Any]]
SHARD_KINDS: dict[str, ShardCompute] = {}
_KEY = "dradash:whatif:shard:{group}"
# How long a shard's claim and result stay in Redis (a dead run leaves nothing behind for long).
_EXPIRE_SECONDS = 600


def shardable(snapshot: Snapshot) -> bool:
    """Whether headroom splits exactly by node: every slice names its node, no pool has two nodes."""
    owner: dict[tuple[str, str], str] = {}
    for s in snapshot.slices:
        spec = s.get("spec") or {}
        node = spec.get("nodeName")
        if not node:
            return False  # a shared pool (node selector, all nodes, per-device selection)
        key = (str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", "")))
        if owner.setdefault(key, str(node)) != node:
            return False
    return True


def split(nodes: Sequence[str], shards: int) -> list[list[str]]:
    """`nodes` in `shards` contiguous, nearly equal parts (none empty)."""
    shards = max(1, min(shards, len(nodes)))
    size, extra = divmod(len(nodes), shards)
    out, start = [], 0
    for i in range(shards):
        end = start + size + (1 if i < extra else 0)
        out.append(list(nodes[start:end]))
        start = end
    return out


def merge_headroom(parts: Sequence[dict[str, Any]], *, nodes_total: int) -> dict[str, Any]:
    """The headroom answer for all nodes from the answers for contiguous shards of them, in order."""
    per_node = [n for part in parts for n in part["per_node"]]
    per_class: Counter[str] = Counter()
    for part in parts:
        per_class.update({c["class"]: c["devices"] for c in part["per_class"]})
    first = parts[0]
    return {
        "subject": first["subject"],
        "total": sum(n["copies"] for n in per_node),
        "capped": any(n["capped"] for n in per_node),
        "max_per_node": first["max_per_node"],
        "nodes_total": nodes_total,
        "nodes_with_room": sum(1 for n in per_node if n["copies"]),
        "per_node": per_node,
        "per_class": [{"class": c, "devices": n} for c, n in sorted(per_class.items())],
        "computed_nodes": sum(part["computed_nodes"] for part in parts),
        "shards": len(parts),
    }


class ShardQueue(Protocol):
    """Where shards go: `start` hands shards 1.. to other workers, `take(i)` is True when this process
    may compute shard i itself (nobody started it), `results` yields (index, result) as they arrive."""

    def start(self, payloads: list[dict[str, Any]]) -> None: ...

    def take(self, index: int) -> bool: ...

    def results(self, pending: set[int], *, timeout: float) -> list[tuple[int, dict[str, Any] | None]]: ...


def headroom_sharded(
    *,
    data: dict[str, Any],
    snapshot: Snapshot,
    shards: int,
    queue: ShardQueue,
    compute: Callable[[list[str]], dict[str, Any]],
    budget: Budget,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Headroom over `shards` contiguous shards of the nodes; `compute(nodes)` answers one shard here."""
    nodes = node_names(snapshot)
    parts = run_sharded(
        kind="headroom",
        data=data,
        snapshot=snapshot,
        shards=shards,
        queue=queue,
        compute=compute,
        budget=budget,
        progress=progress,
        phase="placing copies, shard by shard",
    )
    return merge_headroom([result for _nodes, result in parts], nodes_total=len(nodes))


def run_sharded(
    *,
    kind: str,
    data: dict[str, Any],
    snapshot: Snapshot,
    shards: int,
    queue: ShardQueue,
    compute: Callable[[list[str]], dict[str, Any]],
    budget: Budget,
    progress: Progress = no_progress,
    phase: str = "computing shard by shard",
) -> list[tuple[list[str], dict[str, Any]]]:
    """(nodes, answer) of each of `shards` contiguous shards of the nodes, in node order: shard 0 and
    every shard no worker started yet computed here by `compute(nodes)`, the rest by the workers
    (`SHARD_KINDS[kind]` with `data` as its input)."""
    nodes = node_names(snapshot)
    parts_nodes = split(nodes, shards)
    group = uuid.uuid4().hex
    deadline_in = None if budget.deadline is None else budget.deadline - budget.monotonic()
    payloads = [
        {
            "group": group,
            "index": i,
            "kind": kind,
            "input": data,
            "nodes": part,
            "versions": snapshot.resource_versions,
            "deadline_epoch": None if deadline_in is None else time.time() + deadline_in,
            "max_search_steps": budget.max_search_steps,
        }
        for i, part in enumerate(parts_nodes)
    ]
    queue.start(payloads[1:])
    results: dict[int, dict[str, Any]] = {}
    done_nodes = 0

    def local(i: int) -> None:
        nonlocal done_nodes
        progress(phase, done_nodes, len(nodes))
        results[i] = compute(parts_nodes[i])
        done_nodes += len(parts_nodes[i])

    local(0)
    for i in range(1, len(parts_nodes)):
        if queue.take(i):
            local(i)
    pending = set(range(len(parts_nodes))) - set(results)
    while pending:
        progress("waiting for the other workers' shards", done_nodes, len(nodes))
        wait = 1.0 if budget.deadline is None else max(0.0, min(1.0, budget.deadline - budget.monotonic()))
        arrived = queue.results(pending, timeout=wait)
        for i, result in arrived:
            pending.discard(i)
            if result is None or result.get("stale") or result.get("error"):
                local(i)  # another snapshot, or an error: answered (or raised) here as unsharded would
            else:
                results[i] = result
                done_nodes += len(parts_nodes[i])
        if not arrived and budget.deadline is not None and budget.monotonic() >= budget.deadline:
            for i in sorted(pending):
                local(i)  # the allocator's own deadline stops this as it would stop the unsharded run
            pending.clear()
    return [(parts_nodes[i], results[i]) for i in range(len(parts_nodes))]


# --------------------------------------------------------------------------- Celery on Redis


class RedisShardQueue:
    """Shards as Celery tasks; claims and results in Redis."""

    def __init__(self, url: str, *, queue: str | None = None) -> None:
        import redis

        self.redis = redis.Redis.from_url(url)
        self.url = url
        self.queue = queue
        self.group = ""

    def start(self, payloads: list[dict[str, Any]]) -> None:
        from celery import group

        from dradash.celery import app

        if not payloads:
            return
        self.group = payloads[0]["group"]
        options = {"queue": self.queue} if self.queue else {}
        with app.connection_for_write(self.url) as conn:
            tasks = group(app.signature(SHARD_TASK, args=[p], **options) for p in payloads)
            tasks.apply_async(producer=conn.Producer())

    def take(self, index: int) -> bool:
        return bool(claim_shard(self.redis, self.group, index))

    def results(self, pending: set[int], *, timeout: float) -> list[tuple[int, dict[str, Any] | None]]:
        key = _KEY.format(group=self.group)
        got = self.redis.blpop([key], timeout=max(1, int(timeout + 0.999)))
        out: list[tuple[int, dict[str, Any] | None]] = []
        while got is not None:
            item = json.loads(got[1])
            if item["index"] in pending:
                out.append((item["index"], item.get("result")))
            raw = self.redis.lpop(key)
            got = (key, raw) if raw is not None else None
        return out


def claim_shard(client: Any, group: str, index: int) -> bool:
    """The first to claim shard `index` of `group` computes it (the run's worker or a shard task)."""
    return bool(client.set(f"{_KEY.format(group=group)}:claim:{index}", "1", nx=True, ex=_EXPIRE_SECONDS))


def push_result(client: Any, group: str, index: int, result: dict[str, Any]) -> None:
    key = _KEY.format(group=group)
    client.rpush(key, json.dumps({"index": index, "result": result}))
    client.expire(key, _EXPIRE_SECONDS)


def shard_execute(*, payload: dict[str, Any]) -> None:
    """Answer one shard in a Celery worker (`SHARD_KINDS[payload kind]`) and push the result, or why
    there is none (another snapshot, an error), to the run's list."""
    import redis

    client = redis.Redis.from_url(str(settings.CELERY_BROKER_URL))
    group, index = payload["group"], payload["index"]
    if not claim_shard(client, group, index):
        return  # the run's worker took it
    result: dict[str, Any]
    try:
        snapshot = snapshot_load()
        if snapshot.resource_versions != payload["versions"]:
            result = {"stale": True}
        else:
            deadline = payload.get("deadline_epoch")
            budget = Budget(
                deadline=None if deadline is None else time.monotonic() + (deadline - time.time()),
                max_search_steps=payload.get("max_search_steps"),
            )
            compute = SHARD_KINDS[payload.get("kind", "headroom")]
            result = compute(payload["input"], payload["nodes"], snapshot, budget)
    except Exception as exc:  # the run's worker computes it again and fails (or not) as unsharded
        log.info("what-if shard %s/%s failed", group, index, exc_info=True)
        result = {"error": f"{type(exc).__name__}: {exc}"}
    push_result(client, group, index, result)


def shard_queue() -> RedisShardQueue | None:
    """The Redis shard queue when runs go to Celery on Redis and sharding is on; else None."""
    url = str(settings.CELERY_BROKER_URL or "")
    if settings.DRADASH_WHATIF_SHARDS <= 1 or not url.startswith(("redis://", "rediss://")):
        return None
    return RedisShardQueue(url, queue=settings.DRADASH_WHATIF_SHARD_QUEUE or None)
