"""With REDIS_URL, runs go through Redis to a separate `celery -A dradash worker` process."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import redis
from django.contrib.auth.models import User

from allocation.models import RunState, WhatIfRun
from allocation.services import whatif_run_create
from dradash.celery import app
from tests.allocation import whatif_objects as o
from tests.allocation.whatif_objects import _migrated_sqlite_file, shared_db  # noqa: F401  (fixtures)
from tests.celery_worker import celery_worker_process

pytestmark = pytest.mark.django_db(transaction=True)


# Every worktree's suite may use the same Redis database: a queue of this test's own keeps another
# suite's worker from taking (and dropping) this test's run.
QUEUE = f"whatif-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def redis_url() -> str:
    """The suite's Redis (its own database number), or database 11 of the local server."""
    configured = os.environ.get("REDIS_URL")
    return configured or "redis://127.0.0.1:6379/11"


@pytest.fixture
def separate_worker(shared_db: str, tmp_path: Path) -> Iterator[str]:  # noqa: F811
    url = redis_url()
    try:
        redis.Redis.from_url(url).ping()
    except redis.exceptions.ConnectionError:
        pytest.fail(f"Redis is not reachable at {urlparse(url).netloc}; start it (scripts/services)")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "dradash.test_settings",
        "DATABASE_URL": shared_db,
        "REDIS_URL": url,
        "DRADASH_CELERY_BROKER_URL": url,
    }
    with celery_worker_process(env=env, queue=QUEUE, log_path=tmp_path / "worker.log"):
        yield url


def test_it_runs_a_what_if_in_a_separate_worker_process_through_redis(
    separate_worker: str, tmp_path: Path
) -> None:
    o.store(*o.small_cluster().values(), versions={"resourceslices": "7"})
    with app.connection_for_write(separate_worker) as conn:
        run = whatif_run_create(
            kind="headroom",
            input={"source": "class", "deviceClassName": o.DRIVER},
            user=User.objects.create_user("rita"),
            celery_options={"producer": conn.Producer(), "queue": QUEUE},
        )
    deadline = time.monotonic() + 60
    while not (run := WhatIfRun.objects.get(pk=run.pk)).is_finished:
        if time.monotonic() > deadline:
            log = (tmp_path / "worker.log").read_text()[-3000:]
            raise AssertionError(f"run still {run.state} after 60 s; worker log:\n{log}")
        time.sleep(0.05)
    assert run.state == RunState.SUCCEEDED, run.error
    assert run.result is not None and run.result["total"] == 3
    assert run.snapshot_versions == {"resourceslices": "7"}
    assert run.started_at is not None and run.heartbeat_at is not None


def test_a_headroom_split_into_shards_is_answered_by_a_celery_worker_and_merged(separate_worker: str) -> None:
    from allocation.snapshot import snapshot_load
    from allocation.whatif.base import Budget
    from allocation.whatif.kinds.headroom import headroom
    from allocation.whatif.shards import RedisShardQueue, headroom_sharded
    from allocation.whatif.subject import resolve_subject
    from tests.allocation.test_whatif_dedupe import cluster

    class NeverSteal(RedisShardQueue):
        """The run computes only shard 0: every other shard must come back from the Celery worker."""

        def take(self, index: int) -> bool:
            return False

    o.store(*cluster(), versions={"resourceslices": "9"})
    data = {"source": "class", "deviceClassName": o.DRIVER, "count": 1, "max_per_node": 64}
    snapshot = snapshot_load()
    subject = resolve_subject(data, snapshot)
    whole = headroom(snapshot=snapshot, subject=subject, max_per_node=64)
    here: list[list[str]] = []

    def compute(nodes: list[str]) -> dict[str, Any]:
        here.append(nodes)
        return headroom(snapshot=snapshot, subject=subject, max_per_node=64, only_nodes=nodes)

    merged = headroom_sharded(
        data=data,
        snapshot=snapshot,
        shards=3,
        queue=NeverSteal(separate_worker, queue=QUEUE),
        compute=compute,
        budget=Budget(deadline=time.monotonic() + 60),
    )
    assert merged["shards"] == 3
    assert len(here) == 1, "a shard the worker should have answered was computed by the run"
    assert [(n["node"], n["copies"]) for n in merged["per_node"]] == [
        (n["node"], n["copies"]) for n in whole["per_node"]
    ]
    assert (merged["total"], merged["per_class"]) == (whole["total"], whole["per_class"])


def test_a_taint_impact_split_into_shards_is_answered_by_a_celery_worker_and_merged(
    separate_worker: str,
) -> None:
    from allocation.snapshot import snapshot_load
    from allocation.whatif.base import Budget
    from allocation.whatif.kinds.taint_impact import taint_impact_compute
    from allocation.whatif.shards import RedisShardQueue, run_sharded
    from tests.allocation.test_taint_impact_shards import NO_EXECUTE, NOW, SELECTORS, cluster

    class NeverSteal(RedisShardQueue):
        """The run computes only shard 0: every other shard must come back from the Celery worker."""

        def take(self, index: int) -> bool:
            return False

    o.store(*cluster(), versions={"resourceslices": "11"})
    snapshot = snapshot_load()
    here: list[list[str]] = []

    def scans(scan_here: Any) -> Any:
        def compute(nodes: list[str]) -> dict[str, Any]:
            here.append(nodes)
            return scan_here(nodes)

        return run_sharded(
            kind="taint_impact",
            data={"selectors": SELECTORS, "taint": NO_EXECUTE, "now": NOW.isoformat()},
            snapshot=snapshot,
            shards=3,
            queue=NeverSteal(separate_worker, queue=QUEUE),
            compute=compute,
            budget=Budget(deadline=time.monotonic() + 60),
        )

    def answer(**kwargs: Any) -> dict[str, Any]:
        impact = taint_impact_compute(
            snapshot=snapshot, selectors=SELECTORS, taint=NO_EXECUTE, now=NOW, **kwargs
        )
        return impact.to_json()

    merged = answer(scans=scans)

    assert len(here) == 1, "a shard the worker should have answered was computed by the run"
    assert merged == answer()
    assert merged["summary"]["evicted"] == 7 and merged["pending_unschedulable"]
